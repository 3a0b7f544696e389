/work/main/bin/acceptlab-diagnose --port 46689 --load ramp --connections 32 --rounds 3 --json
