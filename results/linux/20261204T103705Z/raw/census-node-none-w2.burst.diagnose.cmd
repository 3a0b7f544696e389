/work/main/bin/acceptlab-diagnose --port 33511 --load burst --connections 32 --rounds 3 --json
