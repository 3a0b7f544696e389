/work/main/bin/acceptlab-diagnose --port 34677 --load burst --connections 32 --rounds 3 --json
