/work/main/bin/acceptlab-diagnose --port 50629 --load keepalive --connections 32 --rounds 3 --json
