/work/main/bin/acceptlab-diagnose --port 45821 --load burst --connections 32 --rounds 3 --json
