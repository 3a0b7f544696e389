/work/main/bin/acceptlab-diagnose --port 33143 --load keepalive --connections 32 --rounds 3 --json
