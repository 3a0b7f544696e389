/work/main/bin/acceptlab-diagnose --port 37353 --load keepalive --connections 32 --rounds 3 --json
