/work/main/bin/acceptlab-diagnose --port 49475 --load burst --connections 32 --rounds 3 --json
