/work/main/bin/acceptlab-diagnose --port 45673 --load keepalive --connections 32 --rounds 3 --json
