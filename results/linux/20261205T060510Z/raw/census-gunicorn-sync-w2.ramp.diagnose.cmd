/work/main/bin/acceptlab-diagnose --port 33333 --load ramp --connections 32 --rounds 3 --json
