/work/main/bin/acceptlab-diagnose --port 55127 --load burst --connections 32 --rounds 3 --json
