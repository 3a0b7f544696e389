/work/main/bin/acceptlab-diagnose --port 48851 --load keepalive --connections 32 --rounds 3 --json
