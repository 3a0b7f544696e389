/work/wt/dev/bin/acceptlab-diagnose --port 57385 --load ramp --connections 32 --rounds 3 --json
