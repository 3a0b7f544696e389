/work/main/bin/acceptlab-diagnose --port 33717 --load ramp --connections 32 --rounds 3 --tcp --json
