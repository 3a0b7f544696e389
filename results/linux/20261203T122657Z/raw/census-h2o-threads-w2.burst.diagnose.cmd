/work/main/bin/acceptlab-diagnose --port 60669 --load burst --connections 32 --rounds 3 --json
