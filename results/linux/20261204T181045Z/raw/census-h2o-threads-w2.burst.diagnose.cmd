/work/main/bin/acceptlab-diagnose --port 55285 --load burst --connections 32 --rounds 3 --json
