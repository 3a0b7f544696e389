/work/main/bin/acceptlab-diagnose --port 48741 --load burst --connections 32 --rounds 3 --json
