/work/main/bin/acceptlab-diagnose --port 57763 --load burst --connections 32 --rounds 3 --json
