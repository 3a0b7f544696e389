/work/main/bin/acceptlab-diagnose --port 37397 --load ramp --connections 32 --rounds 3 --json
