/work/main/bin/acceptlab-diagnose --port 35381 --load burst --connections 32 --rounds 3 --json
