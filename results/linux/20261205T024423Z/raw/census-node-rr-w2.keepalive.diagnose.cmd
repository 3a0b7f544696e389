/work/main/bin/acceptlab-diagnose --port 49405 --load keepalive --connections 32 --rounds 3 --json
