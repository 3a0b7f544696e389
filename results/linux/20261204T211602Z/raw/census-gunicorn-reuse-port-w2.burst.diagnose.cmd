/work/main/bin/acceptlab-diagnose --port 55965 --load burst --connections 32 --rounds 3 --json
