/work/main/bin/acceptlab-diagnose --port 46893 --load ramp --connections 32 --rounds 3 --json
