/work/main/bin/acceptlab-diagnose --port 36203 --load burst --connections 32 --rounds 3 --json
