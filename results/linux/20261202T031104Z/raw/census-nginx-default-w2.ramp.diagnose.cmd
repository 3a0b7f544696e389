/work/wt/dev/bin/acceptlab-diagnose --port 50463 --load ramp --connections 32 --rounds 3 --json
