/work/main/bin/acceptlab-diagnose --port 39807 --load ramp --connections 32 --rounds 3 --json
