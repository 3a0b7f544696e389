/work/main/bin/acceptlab-diagnose --port 49147 --load burst --connections 32 --rounds 3 --json
