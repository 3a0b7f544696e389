/work/main/bin/acceptlab-diagnose --port 41645 --load burst --connections 32 --rounds 3 --json
