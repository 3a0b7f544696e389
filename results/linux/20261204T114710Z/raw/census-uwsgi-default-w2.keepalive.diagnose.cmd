/work/main/bin/acceptlab-diagnose --port 34181 --load keepalive --connections 32 --rounds 3 --json
