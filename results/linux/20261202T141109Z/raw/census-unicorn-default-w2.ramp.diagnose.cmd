/work/main/bin/acceptlab-diagnose --port 53389 --load ramp --connections 32 --rounds 3 --json
