/work/main/bin/acceptlab-diagnose --port 48277 --load burst --connections 32 --rounds 3 --json
