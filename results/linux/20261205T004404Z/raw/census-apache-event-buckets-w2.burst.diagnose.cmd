/work/main/bin/acceptlab-diagnose --port 52743 --load burst --connections 32 --rounds 3 --json
