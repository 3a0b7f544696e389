/work/main/bin/acceptlab-diagnose --port 46791 --load burst --connections 32 --rounds 3 --json
