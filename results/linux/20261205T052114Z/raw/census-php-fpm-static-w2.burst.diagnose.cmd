/work/main/bin/acceptlab-diagnose --port 56233 --load burst --connections 32 --rounds 3 --tcp --json
