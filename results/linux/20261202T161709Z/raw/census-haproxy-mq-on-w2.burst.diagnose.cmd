/work/main/bin/acceptlab-diagnose --port 46185 --load burst --connections 32 --rounds 3 --json
