/work/main/bin/acceptlab-diagnose --port 44639 --load ramp --connections 32 --rounds 3 --json
