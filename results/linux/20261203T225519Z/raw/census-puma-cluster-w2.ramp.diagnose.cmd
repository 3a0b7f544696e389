/work/main/bin/acceptlab-diagnose --port 56663 --load ramp --connections 32 --rounds 3 --json
