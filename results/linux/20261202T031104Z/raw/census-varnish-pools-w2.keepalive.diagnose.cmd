/work/wt/dev/bin/acceptlab-diagnose --port 40537 --load keepalive --connections 32 --rounds 3 --json
