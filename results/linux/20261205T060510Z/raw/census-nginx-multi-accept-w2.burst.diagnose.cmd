/work/main/bin/acceptlab-diagnose --port 41929 --load burst --connections 32 --rounds 3 --json
