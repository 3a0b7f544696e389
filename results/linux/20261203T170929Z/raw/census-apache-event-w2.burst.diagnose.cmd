/work/main/bin/acceptlab-diagnose --port 51133 --load burst --connections 32 --rounds 3 --json
