/work/main/bin/acceptlab-diagnose --port 46271 --load ramp --connections 32 --rounds 3 --json
