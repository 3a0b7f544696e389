/work/main/bin/acceptlab-diagnose --port 45749 --load burst --connections 32 --rounds 3 --json
