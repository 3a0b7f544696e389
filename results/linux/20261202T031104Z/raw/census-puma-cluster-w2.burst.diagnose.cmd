/work/wt/dev/bin/acceptlab-diagnose --port 48451 --load burst --connections 32 --rounds 3 --json
