/work/main/bin/acceptlab-diagnose --port 47731 --load burst --connections 32 --rounds 3 --tcp --json
