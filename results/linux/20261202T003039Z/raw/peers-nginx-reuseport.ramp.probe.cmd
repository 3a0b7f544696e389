/work/main/bin/acceptlab-probe --target 127.0.0.1:37559 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-reuseport-bwgztykf/ready.json --json --connections 32 --gap-ms 10 --rounds 2
