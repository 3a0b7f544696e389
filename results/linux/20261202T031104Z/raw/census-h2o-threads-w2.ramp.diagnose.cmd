/work/wt/dev/bin/acceptlab-diagnose --port 41143 --load ramp --connections 32 --rounds 3 --json
