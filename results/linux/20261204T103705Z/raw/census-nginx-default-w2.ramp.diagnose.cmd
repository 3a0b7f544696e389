/work/main/bin/acceptlab-diagnose --port 49971 --load ramp --connections 32 --rounds 3 --json
