/work/main/bin/acceptlab-diagnose --port 47213 --load keepalive --connections 32 --rounds 3 --json
