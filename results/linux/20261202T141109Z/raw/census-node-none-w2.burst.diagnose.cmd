/work/main/bin/acceptlab-diagnose --port 59051 --load burst --connections 32 --rounds 3 --json
