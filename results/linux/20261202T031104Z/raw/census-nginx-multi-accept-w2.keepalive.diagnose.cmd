/work/wt/dev/bin/acceptlab-diagnose --port 38815 --load keepalive --connections 32 --rounds 3 --json
