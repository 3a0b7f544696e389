/work/main/bin/acceptlab-diagnose --port 33889 --load burst --connections 32 --rounds 3 --json
