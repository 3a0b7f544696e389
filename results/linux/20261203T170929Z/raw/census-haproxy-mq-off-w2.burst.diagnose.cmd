/work/main/bin/acceptlab-diagnose --port 38547 --load burst --connections 32 --rounds 3 --json
