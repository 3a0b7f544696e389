/work/main/bin/acceptlab-diagnose --port 54123 --load burst --connections 32 --rounds 3 --json
