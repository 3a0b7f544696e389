/work/main/bin/acceptlab-diagnose --port 41241 --load burst --connections 32 --rounds 3 --json
