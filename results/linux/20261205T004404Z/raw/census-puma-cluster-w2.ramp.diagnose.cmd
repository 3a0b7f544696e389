/work/main/bin/acceptlab-diagnose --port 33889 --load ramp --connections 32 --rounds 3 --json
