/work/main/bin/acceptlab-diagnose --port 34181 --load burst --connections 32 --rounds 3 --json
