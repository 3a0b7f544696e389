/work/main/bin/acceptlab-diagnose --port 58049 --load burst --connections 32 --rounds 3 --tcp --json
