/work/main/bin/acceptlab-diagnose --port 60819 --load burst --connections 32 --rounds 3 --json
