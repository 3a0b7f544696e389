/work/main/bin/acceptlab-diagnose --port 57399 --load burst --connections 32 --rounds 3 --json
