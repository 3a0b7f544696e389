/work/main/bin/acceptlab-diagnose --port 45591 --load burst --connections 32 --rounds 3 --json
