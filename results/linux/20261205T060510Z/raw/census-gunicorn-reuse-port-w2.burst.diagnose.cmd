/work/main/bin/acceptlab-diagnose --port 50873 --load burst --connections 32 --rounds 3 --json
