/work/main/bin/acceptlab-diagnose --port 47213 --load ramp --connections 32 --rounds 3 --json
