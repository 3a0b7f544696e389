/work/main/bin/acceptlab-diagnose --port 51239 --load burst --connections 32 --rounds 3 --json
