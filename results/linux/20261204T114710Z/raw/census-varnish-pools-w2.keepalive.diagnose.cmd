/work/main/bin/acceptlab-diagnose --port 57473 --load keepalive --connections 32 --rounds 3 --json
