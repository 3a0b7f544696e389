/work/main/bin/acceptlab-diagnose --port 42453 --load burst --connections 32 --rounds 3 --json
