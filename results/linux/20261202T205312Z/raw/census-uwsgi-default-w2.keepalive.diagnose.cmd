/work/main/bin/acceptlab-diagnose --port 38431 --load keepalive --connections 32 --rounds 3 --json
