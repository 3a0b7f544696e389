/work/main/bin/acceptlab-diagnose --port 59161 --load burst --connections 32 --rounds 3 --json
