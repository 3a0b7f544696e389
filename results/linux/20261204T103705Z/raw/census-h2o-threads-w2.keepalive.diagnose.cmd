/work/main/bin/acceptlab-diagnose --port 42453 --load keepalive --connections 32 --rounds 3 --json
