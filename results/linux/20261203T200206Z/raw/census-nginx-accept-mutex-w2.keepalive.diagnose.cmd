/work/main/bin/acceptlab-diagnose --port 54033 --load keepalive --connections 32 --rounds 3 --json
