/work/main/bin/acceptlab-diagnose --port 37353 --load burst --connections 32 --rounds 3 --json
