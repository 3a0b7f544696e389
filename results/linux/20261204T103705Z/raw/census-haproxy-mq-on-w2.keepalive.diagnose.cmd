/work/main/bin/acceptlab-diagnose --port 60159 --load keepalive --connections 32 --rounds 3 --json
