/work/main/bin/acceptlab-diagnose --port 42653 --load keepalive --connections 32 --rounds 3 --json
