/work/main/bin/acceptlab-diagnose --port 60223 --load burst --connections 32 --rounds 3 --json
