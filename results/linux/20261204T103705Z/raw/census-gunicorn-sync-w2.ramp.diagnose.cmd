/work/main/bin/acceptlab-diagnose --port 51239 --load ramp --connections 32 --rounds 3 --json
