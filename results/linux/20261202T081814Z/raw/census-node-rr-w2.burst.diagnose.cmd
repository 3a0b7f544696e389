/work/main/bin/acceptlab-diagnose --port 43509 --load burst --connections 32 --rounds 3 --json
