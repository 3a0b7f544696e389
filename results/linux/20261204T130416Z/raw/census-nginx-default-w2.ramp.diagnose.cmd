/work/main/bin/acceptlab-diagnose --port 56171 --load ramp --connections 32 --rounds 3 --json
