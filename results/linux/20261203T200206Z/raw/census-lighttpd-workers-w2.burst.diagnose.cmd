/work/main/bin/acceptlab-diagnose --port 36227 --load burst --connections 32 --rounds 3 --json
