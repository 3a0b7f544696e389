/work/wt/dev/bin/acceptlab-diagnose --port 41143 --load keepalive --connections 32 --rounds 3 --json
