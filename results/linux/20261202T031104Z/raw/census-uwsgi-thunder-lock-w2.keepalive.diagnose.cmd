/work/wt/dev/bin/acceptlab-diagnose --port 33701 --load keepalive --connections 32 --rounds 3 --json
