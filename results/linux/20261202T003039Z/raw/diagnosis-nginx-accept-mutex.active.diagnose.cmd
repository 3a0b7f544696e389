/work/main/bin/acceptlab-diagnose --port 60595 --load burst --connections 32 --json
