/work/main/bin/acceptlab-diagnose --port 38981 --load burst --connections 32 --rounds 3 --tcp --json
