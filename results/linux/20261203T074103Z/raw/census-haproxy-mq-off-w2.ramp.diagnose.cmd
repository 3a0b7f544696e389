/work/main/bin/acceptlab-diagnose --port 41843 --load ramp --connections 32 --rounds 3 --json
