/work/main/bin/acceptlab-diagnose --port 50507 --load burst --connections 32 --rounds 3 --tcp --json
