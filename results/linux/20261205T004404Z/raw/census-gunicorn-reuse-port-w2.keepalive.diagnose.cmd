/work/main/bin/acceptlab-diagnose --port 45619 --load keepalive --connections 32 --rounds 3 --json
