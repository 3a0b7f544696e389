/work/main/bin/acceptlab-diagnose --port 49347 --load burst --connections 32 --rounds 3 --json
