/work/main/bin/acceptlab-diagnose --port 33143 --load burst --connections 32 --rounds 3 --json
