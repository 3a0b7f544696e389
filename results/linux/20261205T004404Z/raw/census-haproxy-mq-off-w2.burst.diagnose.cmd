/work/main/bin/acceptlab-diagnose --port 48081 --load burst --connections 32 --rounds 3 --json
