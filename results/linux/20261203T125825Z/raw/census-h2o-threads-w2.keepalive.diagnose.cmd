/work/main/bin/acceptlab-diagnose --port 56159 --load keepalive --connections 32 --rounds 3 --json
