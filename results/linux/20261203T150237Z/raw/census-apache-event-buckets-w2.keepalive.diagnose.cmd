/work/main/bin/acceptlab-diagnose --port 37807 --load keepalive --connections 32 --rounds 3 --json
