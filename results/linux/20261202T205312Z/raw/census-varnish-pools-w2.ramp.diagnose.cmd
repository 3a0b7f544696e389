/work/main/bin/acceptlab-diagnose --port 47969 --load ramp --connections 32 --rounds 3 --json
