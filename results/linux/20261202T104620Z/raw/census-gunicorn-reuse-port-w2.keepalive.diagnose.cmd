/work/main/bin/acceptlab-diagnose --port 54635 --load keepalive --connections 32 --rounds 3 --json
