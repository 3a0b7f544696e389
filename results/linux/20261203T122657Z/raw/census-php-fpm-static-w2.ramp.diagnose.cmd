/work/main/bin/acceptlab-diagnose --port 45829 --load ramp --connections 32 --rounds 3 --tcp --json
