/work/main/bin/acceptlab-diagnose --port 47971 --load burst --connections 32 --rounds 3 --json
