/work/main/bin/acceptlab-diagnose --port 58037 --load burst --connections 32 --rounds 3 --json
