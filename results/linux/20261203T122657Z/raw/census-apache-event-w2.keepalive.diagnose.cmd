/work/main/bin/acceptlab-diagnose --port 46589 --load keepalive --connections 32 --rounds 3 --json
