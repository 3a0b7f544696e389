/work/main/bin/acceptlab-diagnose --port 39131 --load burst --connections 32 --rounds 3 --tcp --json
