/work/main/bin/acceptlab-diagnose --port 37673 --load ramp --connections 32 --rounds 3 --json
