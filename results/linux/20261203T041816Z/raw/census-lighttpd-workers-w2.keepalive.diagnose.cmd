/work/main/bin/acceptlab-diagnose --port 60439 --load keepalive --connections 32 --rounds 3 --json
