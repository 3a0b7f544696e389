/work/main/bin/acceptlab-diagnose --port 41343 --load burst --connections 32 --rounds 3 --json
