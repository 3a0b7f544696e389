/work/main/bin/acceptlab-diagnose --port 51707 --load burst --connections 32 --rounds 3 --json
