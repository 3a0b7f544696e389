/work/main/bin/acceptlab-diagnose --port 35293 --load ramp --connections 32 --rounds 3 --tcp --json
