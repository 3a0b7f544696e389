/work/main/bin/acceptlab-probe --target 127.0.0.1:48381 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-default-lqjnbkbg/ready.json --json --connections 32 --gap-ms 10 --rounds 3
