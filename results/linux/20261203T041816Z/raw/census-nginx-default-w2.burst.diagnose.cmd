/work/main/bin/acceptlab-diagnose --port 51975 --load burst --connections 32 --rounds 3 --json
