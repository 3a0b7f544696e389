/work/main/bin/acceptlab-diagnose --port 35039 --load burst --connections 32 --json
