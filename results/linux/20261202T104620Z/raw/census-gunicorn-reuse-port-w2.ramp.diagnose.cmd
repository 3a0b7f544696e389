/work/main/bin/acceptlab-diagnose --port 54635 --load ramp --connections 32 --rounds 3 --json
