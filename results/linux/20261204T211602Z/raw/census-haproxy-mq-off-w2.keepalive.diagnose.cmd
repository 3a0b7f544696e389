/work/main/bin/acceptlab-diagnose --port 47579 --load keepalive --connections 32 --rounds 3 --json
