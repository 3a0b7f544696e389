/work/main/bin/acceptlab-diagnose --port 39789 --load burst --connections 32 --rounds 3 --json
