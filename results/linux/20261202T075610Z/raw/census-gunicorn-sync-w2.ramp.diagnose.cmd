/work/main/bin/acceptlab-diagnose --port 39903 --load ramp --connections 32 --rounds 3 --json
