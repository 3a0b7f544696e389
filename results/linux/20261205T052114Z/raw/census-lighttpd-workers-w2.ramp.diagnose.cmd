/work/main/bin/acceptlab-diagnose --port 44669 --load ramp --connections 32 --rounds 3 --json
