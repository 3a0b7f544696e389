/work/main/bin/acceptlab-diagnose --port 47767 --load burst --connections 32 --rounds 3 --json
