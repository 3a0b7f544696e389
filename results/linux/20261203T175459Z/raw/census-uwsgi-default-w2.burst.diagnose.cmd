/work/main/bin/acceptlab-diagnose --port 36889 --load burst --connections 32 --rounds 3 --json
