/work/main/bin/acceptlab-diagnose --port 35967 --load keepalive --connections 32 --rounds 3 --json
