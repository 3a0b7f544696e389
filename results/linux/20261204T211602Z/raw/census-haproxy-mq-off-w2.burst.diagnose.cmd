/work/main/bin/acceptlab-diagnose --port 47579 --load burst --connections 32 --rounds 3 --json
