/work/main/bin/acceptlab-diagnose --port 43117 --load burst --connections 32 --rounds 3 --json
