/work/main/bin/acceptlab-diagnose --port 35967 --load burst --connections 32 --rounds 3 --json
