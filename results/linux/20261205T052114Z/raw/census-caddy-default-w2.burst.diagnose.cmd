/work/main/bin/acceptlab-diagnose --port 41321 --load burst --connections 32 --rounds 3 --json
