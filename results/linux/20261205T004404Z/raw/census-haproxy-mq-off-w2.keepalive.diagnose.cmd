/work/main/bin/acceptlab-diagnose --port 48081 --load keepalive --connections 32 --rounds 3 --json
