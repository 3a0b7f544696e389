/work/main/bin/acceptlab-diagnose --port 38375 --load burst --connections 32 --rounds 3 --json
