/work/main/bin/acceptlab-diagnose --port 37353 --load ramp --connections 32 --rounds 3 --json
