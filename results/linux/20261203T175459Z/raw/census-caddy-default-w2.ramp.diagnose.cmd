/work/main/bin/acceptlab-diagnose --port 50093 --load ramp --connections 32 --rounds 3 --json
