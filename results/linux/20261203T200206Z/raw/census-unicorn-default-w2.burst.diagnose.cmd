/work/main/bin/acceptlab-diagnose --port 58207 --load burst --connections 32 --rounds 3 --json
