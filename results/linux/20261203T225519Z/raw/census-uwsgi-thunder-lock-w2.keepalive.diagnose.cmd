/work/main/bin/acceptlab-diagnose --port 33965 --load keepalive --connections 32 --rounds 3 --json
