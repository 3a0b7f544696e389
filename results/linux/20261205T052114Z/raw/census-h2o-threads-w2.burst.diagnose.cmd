/work/main/bin/acceptlab-diagnose --port 32857 --load burst --connections 32 --rounds 3 --json
