/work/main/bin/acceptlab-diagnose --port 34181 --load ramp --connections 32 --rounds 3 --json
