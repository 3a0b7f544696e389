/work/main/bin/acceptlab-diagnose --port 41417 --load ramp --connections 32 --rounds 3 --json
