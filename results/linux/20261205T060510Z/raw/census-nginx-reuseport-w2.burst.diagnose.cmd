/work/main/bin/acceptlab-diagnose --port 41417 --load burst --connections 32 --rounds 3 --json
