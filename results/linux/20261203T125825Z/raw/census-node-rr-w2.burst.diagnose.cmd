/work/main/bin/acceptlab-diagnose --port 44269 --load burst --connections 32 --rounds 3 --json
