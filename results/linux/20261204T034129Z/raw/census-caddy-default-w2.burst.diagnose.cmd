/work/main/bin/acceptlab-diagnose --port 60283 --load burst --connections 32 --rounds 3 --json
