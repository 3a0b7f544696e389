/work/main/bin/acceptlab-diagnose --port 36959 --load burst --connections 32 --rounds 3 --json
