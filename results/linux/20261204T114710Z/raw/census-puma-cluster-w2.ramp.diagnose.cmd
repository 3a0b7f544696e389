/work/main/bin/acceptlab-diagnose --port 34729 --load ramp --connections 32 --rounds 3 --json
