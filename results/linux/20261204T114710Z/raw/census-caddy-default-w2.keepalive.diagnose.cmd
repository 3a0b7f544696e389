/work/main/bin/acceptlab-diagnose --port 43725 --load keepalive --connections 32 --rounds 3 --json
