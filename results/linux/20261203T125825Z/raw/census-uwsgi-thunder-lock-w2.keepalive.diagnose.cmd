/work/main/bin/acceptlab-diagnose --port 45821 --load keepalive --connections 32 --rounds 3 --json
