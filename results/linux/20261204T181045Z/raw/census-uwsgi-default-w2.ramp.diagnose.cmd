/work/main/bin/acceptlab-diagnose --port 36459 --load ramp --connections 32 --rounds 3 --json
