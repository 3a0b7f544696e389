/work/main/bin/acceptlab-diagnose --port 45553 --load ramp --connections 32 --rounds 3 --json
