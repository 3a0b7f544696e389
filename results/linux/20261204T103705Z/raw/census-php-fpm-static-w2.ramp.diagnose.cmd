/work/main/bin/acceptlab-diagnose --port 43589 --load ramp --connections 32 --rounds 3 --tcp --json
