/work/main/bin/acceptlab-diagnose --port 49971 --load burst --connections 32 --rounds 3 --json
