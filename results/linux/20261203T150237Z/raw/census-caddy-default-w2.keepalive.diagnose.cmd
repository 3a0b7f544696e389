/work/main/bin/acceptlab-diagnose --port 41447 --load keepalive --connections 32 --rounds 3 --json
