/work/main/bin/acceptlab-diagnose --port 47567 --load burst --connections 32 --rounds 3 --json
