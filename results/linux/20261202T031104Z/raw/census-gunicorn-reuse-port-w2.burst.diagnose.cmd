/work/wt/dev/bin/acceptlab-diagnose --port 55359 --load burst --connections 32 --rounds 3 --json
