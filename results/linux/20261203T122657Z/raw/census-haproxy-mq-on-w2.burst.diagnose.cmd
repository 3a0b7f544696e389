/work/main/bin/acceptlab-diagnose --port 60101 --load burst --connections 32 --rounds 3 --json
