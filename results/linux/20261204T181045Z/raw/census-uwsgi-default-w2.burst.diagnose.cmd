/work/main/bin/acceptlab-diagnose --port 36459 --load burst --connections 32 --rounds 3 --json
