/work/main/bin/acceptlab-diagnose --port 60159 --load ramp --connections 32 --rounds 3 --json
