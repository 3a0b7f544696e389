/work/main/bin/acceptlab-diagnose --port 58175 --load ramp --connections 32 --rounds 3 --json
