/work/main/bin/acceptlab-diagnose --port 43589 --load burst --connections 32 --rounds 3 --tcp --json
