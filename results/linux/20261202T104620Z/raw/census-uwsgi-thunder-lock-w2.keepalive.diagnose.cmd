/work/main/bin/acceptlab-diagnose --port 54735 --load keepalive --connections 32 --rounds 3 --json
