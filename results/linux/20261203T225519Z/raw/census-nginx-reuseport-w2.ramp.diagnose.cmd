/work/main/bin/acceptlab-diagnose --port 37291 --load ramp --connections 32 --rounds 3 --json
