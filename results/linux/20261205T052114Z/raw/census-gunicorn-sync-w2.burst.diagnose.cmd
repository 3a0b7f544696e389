/work/main/bin/acceptlab-diagnose --port 46689 --load burst --connections 32 --rounds 3 --json
