/work/main/bin/acceptlab-diagnose --port 46605 --load burst --connections 32 --rounds 3 --json
