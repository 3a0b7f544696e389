/work/main/bin/acceptlab-diagnose --port 43339 --load ramp --connections 32 --rounds 3 --json
