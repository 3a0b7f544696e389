/work/main/bin/acceptlab-diagnose --port 52177 --load burst --connections 32 --rounds 3 --json
