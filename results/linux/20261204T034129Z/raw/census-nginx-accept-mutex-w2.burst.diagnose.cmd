/work/main/bin/acceptlab-diagnose --port 49839 --load burst --connections 32 --rounds 3 --json
