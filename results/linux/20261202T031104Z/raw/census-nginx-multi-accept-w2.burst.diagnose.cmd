/work/wt/dev/bin/acceptlab-diagnose --port 38815 --load burst --connections 32 --rounds 3 --json
