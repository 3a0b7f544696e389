/work/main/bin/acceptlab-diagnose --port 56885 --load burst --connections 32 --rounds 3 --json
