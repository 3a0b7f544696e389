/work/main/bin/acceptlab-diagnose --port 59611 --load ramp --connections 32 --rounds 3 --json
