/work/main/bin/acceptlab-diagnose --port 52807 --load burst --connections 32 --rounds 3 --json
