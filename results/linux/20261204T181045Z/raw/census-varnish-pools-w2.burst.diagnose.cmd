/work/main/bin/acceptlab-diagnose --port 52709 --load burst --connections 32 --rounds 3 --json
