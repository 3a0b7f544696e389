/work/main/bin/acceptlab-diagnose --port 60223 --load keepalive --connections 32 --rounds 3 --json
