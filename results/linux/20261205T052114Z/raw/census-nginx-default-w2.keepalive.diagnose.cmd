/work/main/bin/acceptlab-diagnose --port 34907 --load keepalive --connections 32 --rounds 3 --json
