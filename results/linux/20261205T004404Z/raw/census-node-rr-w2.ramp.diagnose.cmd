/work/main/bin/acceptlab-diagnose --port 47517 --load ramp --connections 32 --rounds 3 --json
