/work/wt/dev/bin/acceptlab-diagnose --port 57403 --load burst --connections 32 --rounds 3 --json
