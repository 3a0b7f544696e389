/work/main/bin/acceptlab-diagnose --port 54151 --load burst --connections 32 --rounds 3 --json
