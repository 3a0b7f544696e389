/work/main/bin/acceptlab-diagnose --port 47517 --load burst --connections 32 --rounds 3 --json
