/work/main/bin/acceptlab-diagnose --port 54033 --load ramp --connections 32 --rounds 3 --json
