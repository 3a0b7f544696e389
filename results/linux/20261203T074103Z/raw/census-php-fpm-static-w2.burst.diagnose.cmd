/work/main/bin/acceptlab-diagnose --port 42117 --load burst --connections 32 --rounds 3 --tcp --json
