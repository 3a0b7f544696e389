/work/wt/dev/bin/acceptlab-diagnose --port 36915 --load ramp --connections 32 --rounds 3 --json
