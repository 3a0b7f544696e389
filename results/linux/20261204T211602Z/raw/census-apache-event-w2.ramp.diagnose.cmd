/work/main/bin/acceptlab-diagnose --port 33467 --load ramp --connections 32 --rounds 3 --json
