/work/main/bin/acceptlab-diagnose --port 44095 --load burst --connections 32 --rounds 3 --json
