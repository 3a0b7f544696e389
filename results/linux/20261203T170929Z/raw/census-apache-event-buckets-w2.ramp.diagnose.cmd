/work/main/bin/acceptlab-diagnose --port 45909 --load ramp --connections 32 --rounds 3 --json
