/work/main/bin/acceptlab-diagnose --port 54673 --load keepalive --connections 32 --rounds 3 --json
