/work/main/bin/acceptlab-diagnose --port 38985 --load keepalive --connections 32 --rounds 3 --json
