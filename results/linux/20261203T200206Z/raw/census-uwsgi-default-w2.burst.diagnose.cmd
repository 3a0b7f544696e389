/work/main/bin/acceptlab-diagnose --port 40363 --load burst --connections 32 --rounds 3 --json
