/work/main/bin/acceptlab-diagnose --port 59703 --load keepalive --connections 32 --rounds 3 --json
