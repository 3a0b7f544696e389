/work/main/bin/acceptlab-diagnose --port 50873 --load ramp --connections 32 --rounds 3 --json
