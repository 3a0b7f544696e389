/work/main/bin/acceptlab-diagnose --port 60105 --load keepalive --connections 32 --rounds 3 --json
