/work/main/bin/acceptlab-diagnose --port 35967 --load ramp --connections 32 --rounds 3 --json
