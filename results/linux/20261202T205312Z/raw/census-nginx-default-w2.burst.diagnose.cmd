/work/main/bin/acceptlab-diagnose --port 36993 --load burst --connections 32 --rounds 3 --json
