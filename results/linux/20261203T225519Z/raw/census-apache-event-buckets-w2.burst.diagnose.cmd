/work/main/bin/acceptlab-diagnose --port 45553 --load burst --connections 32 --rounds 3 --json
