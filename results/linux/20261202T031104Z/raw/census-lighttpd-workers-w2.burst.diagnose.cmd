/work/wt/dev/bin/acceptlab-diagnose --port 48271 --load burst --connections 32 --rounds 3 --json
