/work/main/bin/acceptlab-diagnose --port 60553 --load burst --connections 32 --rounds 3 --json
