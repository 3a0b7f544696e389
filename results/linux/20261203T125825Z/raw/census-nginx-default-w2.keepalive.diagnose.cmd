/work/main/bin/acceptlab-diagnose --port 49863 --load keepalive --connections 32 --rounds 3 --json
