/work/main/bin/acceptlab-diagnose --port 45673 --load burst --connections 32 --rounds 3 --json
