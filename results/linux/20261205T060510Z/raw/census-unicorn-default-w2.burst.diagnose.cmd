/work/main/bin/acceptlab-diagnose --port 56047 --load burst --connections 32 --rounds 3 --json
