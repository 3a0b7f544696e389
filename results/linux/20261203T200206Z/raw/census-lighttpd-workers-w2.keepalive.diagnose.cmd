/work/main/bin/acceptlab-diagnose --port 36227 --load keepalive --connections 32 --rounds 3 --json
