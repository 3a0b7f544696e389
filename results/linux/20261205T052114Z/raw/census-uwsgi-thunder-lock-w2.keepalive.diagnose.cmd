/work/main/bin/acceptlab-diagnose --port 33447 --load keepalive --connections 32 --rounds 3 --json
