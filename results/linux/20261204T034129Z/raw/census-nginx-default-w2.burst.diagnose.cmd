/work/main/bin/acceptlab-diagnose --port 46135 --load burst --connections 32 --rounds 3 --json
