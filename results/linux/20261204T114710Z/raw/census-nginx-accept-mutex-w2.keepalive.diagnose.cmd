/work/main/bin/acceptlab-diagnose --port 42467 --load keepalive --connections 32 --rounds 3 --json
