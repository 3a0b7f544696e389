/work/main/bin/acceptlab-diagnose --port 51069 --load burst --connections 32 --rounds 3 --tcp --json
