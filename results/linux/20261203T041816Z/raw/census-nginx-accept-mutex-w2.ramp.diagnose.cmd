/work/main/bin/acceptlab-diagnose --port 60235 --load ramp --connections 32 --rounds 3 --json
