/work/main/bin/acceptlab-diagnose --port 58175 --load keepalive --connections 32 --rounds 3 --json
