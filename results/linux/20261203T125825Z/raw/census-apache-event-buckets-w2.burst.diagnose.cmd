/work/main/bin/acceptlab-diagnose --port 33575 --load burst --connections 32 --rounds 3 --json
