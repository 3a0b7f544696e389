/work/wt/dev/bin/acceptlab-diagnose --port 51507 --load keepalive --connections 32 --rounds 3 --json
