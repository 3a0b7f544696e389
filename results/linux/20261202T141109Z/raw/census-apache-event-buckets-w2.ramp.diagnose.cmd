/work/main/bin/acceptlab-diagnose --port 50629 --load ramp --connections 32 --rounds 3 --json
