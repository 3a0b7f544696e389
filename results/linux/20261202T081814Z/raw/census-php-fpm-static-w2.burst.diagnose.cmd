/work/main/bin/acceptlab-diagnose --port 55627 --load burst --connections 32 --rounds 3 --tcp --json
