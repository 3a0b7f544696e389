/work/main/bin/acceptlab-diagnose --port 42149 --load keepalive --connections 32 --rounds 3 --json
