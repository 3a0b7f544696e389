/work/main/bin/acceptlab-diagnose --port 34683 --load burst --connections 32 --rounds 3 --json
