/work/main/bin/acceptlab-diagnose --port 60669 --load keepalive --connections 32 --rounds 3 --json
