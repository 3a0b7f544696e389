/work/main/bin/acceptlab-diagnose --port 49975 --load burst --connections 32 --rounds 3 --json
