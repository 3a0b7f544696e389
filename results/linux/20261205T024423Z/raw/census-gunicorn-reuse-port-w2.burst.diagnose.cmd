/work/main/bin/acceptlab-diagnose --port 49521 --load burst --connections 32 --rounds 3 --json
