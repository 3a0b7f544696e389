/work/wt/dev/bin/acceptlab-diagnose --port 44897 --load burst --connections 32 --rounds 3 --json
