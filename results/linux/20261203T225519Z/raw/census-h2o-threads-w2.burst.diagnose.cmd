/work/main/bin/acceptlab-diagnose --port 43277 --load burst --connections 32 --rounds 3 --json
