/work/main/bin/acceptlab-diagnose --port 36729 --load burst --connections 32 --rounds 3 --json
