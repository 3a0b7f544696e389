/work/main/bin/acceptlab-diagnose --port 60409 --load burst --connections 32 --rounds 3 --json
