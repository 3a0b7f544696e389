/work/main/bin/acceptlab-diagnose --port 49529 --load burst --connections 32 --rounds 3 --json
