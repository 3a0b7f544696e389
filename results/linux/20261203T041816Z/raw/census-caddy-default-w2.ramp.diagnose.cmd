/work/main/bin/acceptlab-diagnose --port 36641 --load ramp --connections 32 --rounds 3 --json
