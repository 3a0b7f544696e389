/work/main/bin/acceptlab-diagnose --port 60669 --load ramp --connections 32 --rounds 3 --json
