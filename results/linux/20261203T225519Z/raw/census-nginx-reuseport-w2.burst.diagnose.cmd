/work/main/bin/acceptlab-diagnose --port 37291 --load burst --connections 32 --rounds 3 --json
