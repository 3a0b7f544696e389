/work/main/bin/acceptlab-diagnose --port 48431 --load keepalive --connections 32 --rounds 3 --json
