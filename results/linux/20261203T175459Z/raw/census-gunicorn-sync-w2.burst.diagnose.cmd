/work/main/bin/acceptlab-diagnose --port 36493 --load burst --connections 32 --rounds 3 --json
