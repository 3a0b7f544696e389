/work/main/bin/acceptlab-diagnose --port 45269 --load ramp --connections 32 --rounds 3 --tcp --json
