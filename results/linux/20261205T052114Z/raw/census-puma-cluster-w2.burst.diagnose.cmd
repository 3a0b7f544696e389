/work/main/bin/acceptlab-diagnose --port 44769 --load burst --connections 32 --rounds 3 --json
