/work/wt/dev/bin/acceptlab-diagnose --port 47999 --load ramp --connections 32 --rounds 3 --json
