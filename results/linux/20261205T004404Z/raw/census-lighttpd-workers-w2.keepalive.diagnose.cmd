/work/main/bin/acceptlab-diagnose --port 56935 --load keepalive --connections 32 --rounds 3 --json
