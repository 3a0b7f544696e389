/work/main/bin/acceptlab-diagnose --port 33447 --load burst --connections 32 --rounds 3 --json
