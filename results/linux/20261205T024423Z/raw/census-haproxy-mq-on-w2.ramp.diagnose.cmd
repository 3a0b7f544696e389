/work/main/bin/acceptlab-diagnose --port 43779 --load ramp --connections 32 --rounds 3 --json
