/work/main/bin/acceptlab-diagnose --port 51741 --load burst --connections 32 --rounds 3 --json
