/work/main/bin/acceptlab-diagnose --port 50163 --load keepalive --connections 32 --rounds 3 --json
