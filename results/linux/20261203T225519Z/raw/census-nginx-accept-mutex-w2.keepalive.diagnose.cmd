/work/main/bin/acceptlab-diagnose --port 46583 --load keepalive --connections 32 --rounds 3 --json
