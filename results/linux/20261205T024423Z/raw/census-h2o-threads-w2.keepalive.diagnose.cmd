/work/main/bin/acceptlab-diagnose --port 48609 --load keepalive --connections 32 --rounds 3 --json
