/work/main/bin/acceptlab-diagnose --port 49273 --load burst --connections 32 --rounds 3 --json
