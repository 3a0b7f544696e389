/work/main/bin/acceptlab-diagnose --port 60105 --load burst --connections 32 --rounds 3 --json
