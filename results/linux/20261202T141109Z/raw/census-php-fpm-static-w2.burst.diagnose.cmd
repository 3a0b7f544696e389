/work/main/bin/acceptlab-diagnose --port 54127 --load burst --connections 32 --rounds 3 --tcp --json
