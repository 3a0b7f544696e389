/work/main/bin/acceptlab-diagnose --port 42363 --load ramp --connections 32 --rounds 3 --json
