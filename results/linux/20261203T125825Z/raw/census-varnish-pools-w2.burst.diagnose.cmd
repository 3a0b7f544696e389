/work/main/bin/acceptlab-diagnose --port 59413 --load burst --connections 32 --rounds 3 --json
