/work/wt/dev/bin/acceptlab-diagnose --port 48731 --load ramp --connections 32 --rounds 3 --json
