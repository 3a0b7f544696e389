/work/main/bin/acceptlab-diagnose --port 54127 --load ramp --connections 32 --rounds 3 --tcp --json
