/work/main/bin/acceptlab-diagnose --port 60881 --load burst --connections 32 --rounds 3 --json
