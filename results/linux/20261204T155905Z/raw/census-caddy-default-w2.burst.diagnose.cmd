/work/main/bin/acceptlab-diagnose --port 57741 --load burst --connections 32 --rounds 3 --json
