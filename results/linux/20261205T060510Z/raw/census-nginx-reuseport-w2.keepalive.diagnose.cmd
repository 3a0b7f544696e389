/work/main/bin/acceptlab-diagnose --port 41417 --load keepalive --connections 32 --rounds 3 --json
