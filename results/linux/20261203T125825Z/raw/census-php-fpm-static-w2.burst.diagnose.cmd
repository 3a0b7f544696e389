/work/main/bin/acceptlab-diagnose --port 48439 --load burst --connections 32 --rounds 3 --tcp --json
