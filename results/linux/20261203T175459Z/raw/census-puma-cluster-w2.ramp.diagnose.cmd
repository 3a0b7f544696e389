/work/main/bin/acceptlab-diagnose --port 53655 --load ramp --connections 32 --rounds 3 --json
