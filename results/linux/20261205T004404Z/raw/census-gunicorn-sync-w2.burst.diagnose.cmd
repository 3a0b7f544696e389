/work/main/bin/acceptlab-diagnose --port 38283 --load burst --connections 32 --rounds 3 --json
