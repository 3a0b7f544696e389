/work/main/bin/acceptlab-diagnose --port 54483 --load burst --connections 32 --rounds 3 --json
