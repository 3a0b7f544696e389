/work/main/bin/acceptlab-diagnose --port 48605 --load burst --connections 32 --rounds 3 --tcp --json
