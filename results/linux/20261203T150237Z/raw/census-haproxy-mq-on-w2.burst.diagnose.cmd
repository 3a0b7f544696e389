/work/main/bin/acceptlab-diagnose --port 50509 --load burst --connections 32 --rounds 3 --json
