/work/main/bin/acceptlab-diagnose --port 45619 --load ramp --connections 32 --rounds 3 --json
