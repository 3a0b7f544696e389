/work/main/bin/acceptlab-diagnose --port 47731 --load ramp --connections 32 --rounds 3 --tcp --json
