/work/main/bin/acceptlab-diagnose --port 43725 --load burst --connections 32 --rounds 3 --json
