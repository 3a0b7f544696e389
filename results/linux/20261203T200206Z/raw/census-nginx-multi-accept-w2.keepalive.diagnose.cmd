/work/main/bin/acceptlab-diagnose --port 43679 --load keepalive --connections 32 --rounds 3 --json
