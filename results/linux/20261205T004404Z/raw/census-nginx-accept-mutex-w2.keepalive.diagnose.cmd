/work/main/bin/acceptlab-diagnose --port 50337 --load keepalive --connections 32 --rounds 3 --json
