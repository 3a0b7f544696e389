/work/wt/dev/bin/acceptlab-diagnose --port 54333 --load ramp --connections 32 --rounds 3 --json
