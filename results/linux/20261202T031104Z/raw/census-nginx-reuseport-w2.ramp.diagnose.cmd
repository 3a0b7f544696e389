/work/wt/dev/bin/acceptlab-diagnose --port 59359 --load ramp --connections 32 --rounds 3 --json
