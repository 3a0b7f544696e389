/work/main/bin/acceptlab-diagnose --port 59771 --load burst --connections 32 --rounds 3 --json
