/work/main/bin/acceptlab-diagnose --port 59221 --load keepalive --connections 32 --rounds 3 --json
