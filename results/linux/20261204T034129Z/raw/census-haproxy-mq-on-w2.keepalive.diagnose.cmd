/work/main/bin/acceptlab-diagnose --port 54151 --load keepalive --connections 32 --rounds 3 --json
