/work/main/bin/acceptlab-diagnose --port 53037 --load ramp --connections 32 --rounds 3 --json
