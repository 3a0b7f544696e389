/work/main/bin/acceptlab-diagnose --port 59101 --load burst --connections 32 --rounds 3 --json
