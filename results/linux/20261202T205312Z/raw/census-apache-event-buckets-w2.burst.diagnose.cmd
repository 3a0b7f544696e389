/work/main/bin/acceptlab-diagnose --port 48677 --load burst --connections 32 --rounds 3 --json
