/work/main/bin/acceptlab-probe --target 127.0.0.1:53189 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-multi-accept-_s2jr5tu/ready.json --json --connections 32 --gap-ms 10 --rounds 3
