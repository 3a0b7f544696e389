/work/main/bin/acceptlab-diagnose --port 47357 --load ramp --connections 32 --rounds 3 --json
