/work/main/bin/acceptlab-diagnose --port 54055 --load keepalive --connections 32 --rounds 3 --json
