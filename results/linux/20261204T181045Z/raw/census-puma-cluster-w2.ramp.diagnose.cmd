/work/main/bin/acceptlab-diagnose --port 59703 --load ramp --connections 32 --rounds 3 --json
