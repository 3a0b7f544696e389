/work/main/bin/acceptlab-diagnose --port 51535 --load keepalive --connections 32 --rounds 3 --json
