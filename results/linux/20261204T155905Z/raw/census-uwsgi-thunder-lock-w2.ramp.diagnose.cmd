/work/main/bin/acceptlab-diagnose --port 59927 --load ramp --connections 32 --rounds 3 --json
