/work/main/bin/acceptlab-diagnose --port 50769 --load ramp --connections 32 --rounds 3 --json
