/work/main/bin/acceptlab-diagnose --port 32925 --load burst --connections 32 --rounds 3 --json
