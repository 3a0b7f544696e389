/work/main/bin/acceptlab-diagnose --port 48753 --load ramp --connections 32 --rounds 3 --json
