/work/main/bin/acceptlab-diagnose --port 49475 --load ramp --connections 32 --rounds 3 --json
