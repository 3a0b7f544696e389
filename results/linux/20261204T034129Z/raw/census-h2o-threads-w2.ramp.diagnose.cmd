/work/main/bin/acceptlab-diagnose --port 54673 --load ramp --connections 32 --rounds 3 --json
