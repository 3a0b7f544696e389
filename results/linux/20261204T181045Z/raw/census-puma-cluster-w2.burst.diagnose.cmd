/work/main/bin/acceptlab-diagnose --port 59703 --load burst --connections 32 --rounds 3 --json
