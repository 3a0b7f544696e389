/work/wt/dev/bin/acceptlab-diagnose --port 48451 --load ramp --connections 32 --rounds 3 --json
