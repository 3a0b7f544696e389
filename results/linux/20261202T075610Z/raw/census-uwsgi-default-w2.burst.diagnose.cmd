/work/main/bin/acceptlab-diagnose --port 50711 --load burst --connections 32 --rounds 3 --json
