/work/main/bin/acceptlab-diagnose --port 53641 --load keepalive --connections 32 --rounds 3 --json
