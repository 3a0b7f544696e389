/work/main/bin/acceptlab-diagnose --port 41447 --load burst --connections 32 --rounds 3 --json
