/work/main/bin/acceptlab-diagnose --port 35105 --load burst --connections 32 --rounds 3 --json
