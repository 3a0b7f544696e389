/work/wt/dev/bin/acceptlab-diagnose --port 38815 --load ramp --connections 32 --rounds 3 --json
