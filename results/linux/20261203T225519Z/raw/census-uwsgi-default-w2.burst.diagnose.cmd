/work/main/bin/acceptlab-diagnose --port 44991 --load burst --connections 32 --rounds 3 --json
