/work/main/bin/acceptlab-diagnose --port 47969 --load keepalive --connections 32 --rounds 3 --json
