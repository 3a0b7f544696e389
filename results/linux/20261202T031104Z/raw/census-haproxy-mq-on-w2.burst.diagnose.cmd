/work/wt/dev/bin/acceptlab-diagnose --port 51507 --load burst --connections 32 --rounds 3 --json
