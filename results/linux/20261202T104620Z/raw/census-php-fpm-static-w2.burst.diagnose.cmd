/work/main/bin/acceptlab-diagnose --port 53167 --load burst --connections 32 --rounds 3 --tcp --json
