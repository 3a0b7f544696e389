/work/wt/dev/bin/acceptlab-diagnose --port 50463 --load burst --connections 32 --rounds 3 --json
