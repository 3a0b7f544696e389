/work/main/bin/acceptlab-diagnose --port 40593 --load burst --connections 32 --rounds 3 --json
