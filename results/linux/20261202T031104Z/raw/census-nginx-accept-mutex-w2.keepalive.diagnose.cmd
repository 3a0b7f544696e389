/work/wt/dev/bin/acceptlab-diagnose --port 54333 --load keepalive --connections 32 --rounds 3 --json
