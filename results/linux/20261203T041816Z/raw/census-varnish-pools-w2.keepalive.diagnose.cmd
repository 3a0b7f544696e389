/work/main/bin/acceptlab-diagnose --port 50769 --load keepalive --connections 32 --rounds 3 --json
