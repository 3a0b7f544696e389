/work/main/bin/acceptlab-diagnose --port 41109 --load burst --connections 32 --rounds 3 --json
