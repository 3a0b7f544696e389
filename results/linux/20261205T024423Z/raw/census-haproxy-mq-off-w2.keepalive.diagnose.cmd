/work/main/bin/acceptlab-diagnose --port 53037 --load keepalive --connections 32 --rounds 3 --json
