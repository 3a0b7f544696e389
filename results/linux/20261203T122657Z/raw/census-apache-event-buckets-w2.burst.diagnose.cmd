/work/main/bin/acceptlab-diagnose --port 35797 --load burst --connections 32 --rounds 3 --json
