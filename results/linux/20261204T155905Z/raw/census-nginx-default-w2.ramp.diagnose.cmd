/work/main/bin/acceptlab-diagnose --port 44437 --load ramp --connections 32 --rounds 3 --json
