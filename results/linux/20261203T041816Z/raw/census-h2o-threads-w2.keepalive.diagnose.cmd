/work/main/bin/acceptlab-diagnose --port 53727 --load keepalive --connections 32 --rounds 3 --json
