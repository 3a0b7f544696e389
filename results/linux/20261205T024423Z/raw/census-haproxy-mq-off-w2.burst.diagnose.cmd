/work/main/bin/acceptlab-diagnose --port 53037 --load burst --connections 32 --rounds 3 --json
