/work/wt/dev/bin/acceptlab-diagnose --port 36915 --load burst --connections 32 --rounds 3 --json
