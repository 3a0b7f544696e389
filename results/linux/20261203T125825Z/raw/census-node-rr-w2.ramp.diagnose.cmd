/work/main/bin/acceptlab-diagnose --port 44269 --load ramp --connections 32 --rounds 3 --json
