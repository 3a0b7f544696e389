/work/main/bin/acceptlab-diagnose --port 47269 --load burst --connections 32 --rounds 3 --json
