/work/main/bin/acceptlab-diagnose --port 57845 --load burst --connections 32 --rounds 3 --json
