/work/main/bin/acceptlab-probe --target 127.0.0.1:53115 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-7h_us78g/ready.json --json --connections 32 --gap-ms 10 --rounds 3
