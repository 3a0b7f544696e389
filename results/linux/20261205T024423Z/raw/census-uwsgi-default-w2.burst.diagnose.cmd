/work/main/bin/acceptlab-diagnose --port 38535 --load burst --connections 32 --rounds 3 --json
