/work/main/bin/acceptlab-diagnose --port 56075 --load burst --connections 32 --json
