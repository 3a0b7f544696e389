/work/main/bin/acceptlab-diagnose --port 53015 --load burst --connections 32 --rounds 3 --json
