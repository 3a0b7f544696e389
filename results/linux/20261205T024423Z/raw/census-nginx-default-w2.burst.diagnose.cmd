/work/main/bin/acceptlab-diagnose --port 45009 --load burst --connections 32 --rounds 3 --json
