/work/wt/dev/bin/acceptlab-diagnose --port 57385 --load keepalive --connections 32 --rounds 3 --json
