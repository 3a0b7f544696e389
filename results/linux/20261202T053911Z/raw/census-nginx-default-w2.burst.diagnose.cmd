/work/main/bin/acceptlab-diagnose --port 53197 --load burst --connections 32 --rounds 3 --json
