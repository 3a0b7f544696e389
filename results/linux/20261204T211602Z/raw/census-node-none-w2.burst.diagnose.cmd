/work/main/bin/acceptlab-diagnose --port 55197 --load burst --connections 32 --rounds 3 --json
