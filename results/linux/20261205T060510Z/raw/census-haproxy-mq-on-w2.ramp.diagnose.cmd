/work/main/bin/acceptlab-diagnose --port 40921 --load ramp --connections 32 --rounds 3 --json
