/work/main/bin/acceptlab-diagnose --port 37397 --load burst --connections 32 --rounds 3 --json
