/work/main/bin/acceptlab-diagnose --port 48609 --load ramp --connections 32 --rounds 3 --json
