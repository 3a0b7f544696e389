/work/main/bin/acceptlab-diagnose --port 38985 --load burst --connections 32 --rounds 3 --json
