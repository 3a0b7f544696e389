/work/main/bin/acceptlab-diagnose --port 50891 --load keepalive --connections 32 --rounds 3 --json
