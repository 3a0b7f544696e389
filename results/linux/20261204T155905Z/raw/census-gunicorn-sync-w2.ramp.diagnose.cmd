/work/main/bin/acceptlab-diagnose --port 42107 --load ramp --connections 32 --rounds 3 --json
