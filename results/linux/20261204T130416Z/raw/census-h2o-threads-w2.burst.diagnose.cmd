/work/main/bin/acceptlab-diagnose --port 54531 --load burst --connections 32 --rounds 3 --json
