/work/main/bin/acceptlab-diagnose --port 52825 --load burst --connections 32 --rounds 3 --json
