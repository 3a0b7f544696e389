/work/main/bin/acceptlab-diagnose --port 57925 --load burst --connections 32 --rounds 3 --json
