/work/main/bin/acceptlab-diagnose --port 59611 --load keepalive --connections 32 --rounds 3 --json
