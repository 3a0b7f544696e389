/work/main/bin/acceptlab-diagnose --port 52325 --load burst --connections 32 --rounds 3 --json
