/work/main/bin/acceptlab-diagnose --port 45909 --load burst --connections 32 --rounds 3 --json
