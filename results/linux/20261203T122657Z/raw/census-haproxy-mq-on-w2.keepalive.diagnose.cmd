/work/main/bin/acceptlab-diagnose --port 60101 --load keepalive --connections 32 --rounds 3 --json
