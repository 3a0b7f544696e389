/work/main/bin/acceptlab-diagnose --port 54067 --load burst --connections 32 --rounds 3 --json
