/work/main/bin/acceptlab-diagnose --port 33263 --load burst --connections 32 --rounds 3 --json
