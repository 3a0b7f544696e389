/work/main/bin/acceptlab-diagnose --port 57617 --load burst --connections 32 --rounds 3 --json
