/work/main/bin/acceptlab-diagnose --port 33717 --load burst --connections 32 --rounds 3 --tcp --json
