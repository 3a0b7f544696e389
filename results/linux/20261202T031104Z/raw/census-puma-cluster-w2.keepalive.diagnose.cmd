/work/wt/dev/bin/acceptlab-diagnose --port 48451 --load keepalive --connections 32 --rounds 3 --json
