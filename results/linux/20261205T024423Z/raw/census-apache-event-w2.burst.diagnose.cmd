/work/main/bin/acceptlab-diagnose --port 33371 --load burst --connections 32 --rounds 3 --json
