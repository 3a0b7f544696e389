/work/wt/dev/bin/acceptlab-diagnose --port 33145 --load ramp --connections 32 --rounds 3 --json
