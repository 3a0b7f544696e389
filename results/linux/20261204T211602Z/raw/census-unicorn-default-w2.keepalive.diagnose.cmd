/work/main/bin/acceptlab-diagnose --port 41241 --load keepalive --connections 32 --rounds 3 --json
