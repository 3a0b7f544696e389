/work/main/bin/acceptlab-diagnose --port 52577 --load burst --connections 32 --rounds 3 --json
