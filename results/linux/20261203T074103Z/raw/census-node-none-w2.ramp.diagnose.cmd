/work/main/bin/acceptlab-diagnose --port 37903 --load ramp --connections 32 --rounds 3 --json
