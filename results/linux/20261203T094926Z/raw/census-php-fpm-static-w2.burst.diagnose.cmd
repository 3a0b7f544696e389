/work/main/bin/acceptlab-diagnose --port 35293 --load burst --connections 32 --rounds 3 --tcp --json
