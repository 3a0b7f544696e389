/work/main/bin/acceptlab-diagnose --port 58353 --load burst --connections 32 --rounds 3 --json
