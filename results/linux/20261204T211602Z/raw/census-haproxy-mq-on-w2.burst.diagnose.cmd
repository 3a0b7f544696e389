/work/main/bin/acceptlab-diagnose --port 51711 --load burst --connections 32 --rounds 3 --json
