/work/wt/dev/bin/acceptlab-diagnose --port 50463 --load keepalive --connections 32 --rounds 3 --json
