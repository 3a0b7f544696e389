/work/main/bin/acceptlab-diagnose --port 40969 --load burst --connections 32 --rounds 3 --json
