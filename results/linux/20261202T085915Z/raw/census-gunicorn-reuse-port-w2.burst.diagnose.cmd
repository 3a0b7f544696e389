/work/main/bin/acceptlab-diagnose --port 45597 --load burst --connections 32 --rounds 3 --json
