/work/main/bin/acceptlab-diagnose --port 38575 --load keepalive --connections 32 --rounds 3 --json
