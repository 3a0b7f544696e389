/work/main/bin/acceptlab-diagnose --port 45347 --load burst --connections 32 --rounds 3 --json
