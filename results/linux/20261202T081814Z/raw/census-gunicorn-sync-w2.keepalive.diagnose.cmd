/work/main/bin/acceptlab-diagnose --port 37397 --load keepalive --connections 32 --rounds 3 --json
