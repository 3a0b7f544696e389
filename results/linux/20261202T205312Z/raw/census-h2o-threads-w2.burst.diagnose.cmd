/work/main/bin/acceptlab-diagnose --port 60171 --load burst --connections 32 --rounds 3 --json
