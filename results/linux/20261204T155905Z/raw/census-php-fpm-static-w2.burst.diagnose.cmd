/work/main/bin/acceptlab-diagnose --port 49455 --load burst --connections 32 --rounds 3 --tcp --json
