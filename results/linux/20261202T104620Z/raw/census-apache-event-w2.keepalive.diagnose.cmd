/work/main/bin/acceptlab-diagnose --port 36631 --load keepalive --connections 32 --rounds 3 --json
