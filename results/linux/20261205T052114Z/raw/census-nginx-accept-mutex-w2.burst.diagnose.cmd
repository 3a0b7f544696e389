/work/main/bin/acceptlab-diagnose --port 36637 --load burst --connections 32 --rounds 3 --json
