/work/main/bin/acceptlab-diagnose --port 40431 --load burst --connections 32 --rounds 3 --tcp --json
