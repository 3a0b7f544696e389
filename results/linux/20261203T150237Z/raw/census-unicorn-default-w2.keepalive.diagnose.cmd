/work/main/bin/acceptlab-diagnose --port 60045 --load keepalive --connections 32 --rounds 3 --json
