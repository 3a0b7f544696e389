/work/main/bin/acceptlab-diagnose --port 48609 --load burst --connections 32 --rounds 3 --json
