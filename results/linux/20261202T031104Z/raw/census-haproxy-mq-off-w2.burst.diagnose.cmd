/work/wt/dev/bin/acceptlab-diagnose --port 57385 --load burst --connections 32 --rounds 3 --json
