/work/main/bin/acceptlab-diagnose --port 60253 --load burst --connections 32 --rounds 3 --json
