/work/main/bin/acceptlab-diagnose --port 50711 --load keepalive --connections 32 --rounds 3 --json
