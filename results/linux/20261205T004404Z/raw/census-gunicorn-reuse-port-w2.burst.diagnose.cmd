/work/main/bin/acceptlab-diagnose --port 45619 --load burst --connections 32 --rounds 3 --json
