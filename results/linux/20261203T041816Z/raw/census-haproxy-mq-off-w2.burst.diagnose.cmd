/work/main/bin/acceptlab-diagnose --port 39103 --load burst --connections 32 --rounds 3 --json
