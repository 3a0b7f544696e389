/work/main/bin/acceptlab-diagnose --port 46589 --load ramp --connections 32 --rounds 3 --json
