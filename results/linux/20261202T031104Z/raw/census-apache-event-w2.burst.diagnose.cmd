/work/wt/dev/bin/acceptlab-diagnose --port 55741 --load burst --connections 32 --rounds 3 --json
