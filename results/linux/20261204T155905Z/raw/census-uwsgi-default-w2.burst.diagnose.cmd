/work/main/bin/acceptlab-diagnose --port 52703 --load burst --connections 32 --rounds 3 --json
