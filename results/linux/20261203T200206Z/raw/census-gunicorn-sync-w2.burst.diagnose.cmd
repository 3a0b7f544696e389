/work/main/bin/acceptlab-diagnose --port 52097 --load burst --connections 32 --rounds 3 --json
