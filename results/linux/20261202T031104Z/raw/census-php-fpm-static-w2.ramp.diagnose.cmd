/work/wt/dev/bin/acceptlab-diagnose --port 49795 --load ramp --connections 32 --rounds 3 --tcp --json
