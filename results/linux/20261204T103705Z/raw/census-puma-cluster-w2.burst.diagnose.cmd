/work/main/bin/acceptlab-diagnose --port 46015 --load burst --connections 32 --rounds 3 --json
