/work/main/bin/acceptlab-diagnose --port 36253 --load burst --connections 32 --rounds 3 --json
