/work/main/bin/acceptlab-diagnose --port 43117 --load ramp --connections 32 --rounds 3 --json
