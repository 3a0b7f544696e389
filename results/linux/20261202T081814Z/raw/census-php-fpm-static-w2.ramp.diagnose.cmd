/work/main/bin/acceptlab-diagnose --port 55627 --load ramp --connections 32 --rounds 3 --tcp --json
