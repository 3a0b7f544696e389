/work/main/bin/acceptlab-diagnose --port 57063 --load burst --connections 32 --rounds 3 --json
