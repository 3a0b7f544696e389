/work/main/bin/acceptlab-diagnose --port 33689 --load keepalive --connections 32 --rounds 3 --json
