/work/wt/dev/bin/acceptlab-diagnose --port 48271 --load keepalive --connections 32 --rounds 3 --json
