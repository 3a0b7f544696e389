/work/main/bin/acceptlab-diagnose --port 60145 --load ramp --connections 32 --rounds 3 --json
