/work/main/bin/acceptlab-diagnose --port 42933 --load burst --connections 32 --rounds 3 --json
