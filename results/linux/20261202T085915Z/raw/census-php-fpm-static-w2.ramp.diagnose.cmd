/work/main/bin/acceptlab-diagnose --port 50507 --load ramp --connections 32 --rounds 3 --tcp --json
