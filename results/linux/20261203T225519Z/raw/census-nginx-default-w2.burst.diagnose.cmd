/work/main/bin/acceptlab-diagnose --port 48325 --load burst --connections 32 --rounds 3 --json
