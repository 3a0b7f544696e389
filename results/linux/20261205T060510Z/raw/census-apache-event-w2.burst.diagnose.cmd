/work/main/bin/acceptlab-diagnose --port 36179 --load burst --connections 32 --rounds 3 --json
