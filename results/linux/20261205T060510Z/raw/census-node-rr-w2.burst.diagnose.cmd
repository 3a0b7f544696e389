/work/main/bin/acceptlab-diagnose --port 39901 --load burst --connections 32 --rounds 3 --json
