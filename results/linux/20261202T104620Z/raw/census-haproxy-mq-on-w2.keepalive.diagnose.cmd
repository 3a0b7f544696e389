/work/main/bin/acceptlab-diagnose --port 44725 --load keepalive --connections 32 --rounds 3 --json
