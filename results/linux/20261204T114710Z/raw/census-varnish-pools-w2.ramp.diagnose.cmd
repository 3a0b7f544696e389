/work/main/bin/acceptlab-diagnose --port 57473 --load ramp --connections 32 --rounds 3 --json
