/work/wt/dev/bin/acceptlab-diagnose --port 51507 --load ramp --connections 32 --rounds 3 --json
