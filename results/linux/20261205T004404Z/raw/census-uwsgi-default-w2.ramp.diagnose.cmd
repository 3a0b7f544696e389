/work/main/bin/acceptlab-diagnose --port 52825 --load ramp --connections 32 --rounds 3 --json
