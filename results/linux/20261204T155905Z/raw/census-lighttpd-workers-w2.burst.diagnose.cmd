/work/main/bin/acceptlab-diagnose --port 50983 --load burst --connections 32 --rounds 3 --json
