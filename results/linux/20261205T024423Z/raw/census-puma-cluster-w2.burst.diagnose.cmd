/work/main/bin/acceptlab-diagnose --port 54753 --load burst --connections 32 --rounds 3 --json
