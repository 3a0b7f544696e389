/work/main/bin/acceptlab-diagnose --port 50193 --load keepalive --connections 32 --rounds 3 --json
