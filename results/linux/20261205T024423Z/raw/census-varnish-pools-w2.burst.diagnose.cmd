/work/main/bin/acceptlab-diagnose --port 50051 --load burst --connections 32 --rounds 3 --json
