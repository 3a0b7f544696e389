/work/main/bin/acceptlab-diagnose --port 36253 --load keepalive --connections 32 --rounds 3 --json
