/work/main/bin/acceptlab-probe --target 127.0.0.1:40319 --shape ramp --workers-from /tmp/acceptlab-peer-haproxy-mq-off-in9re1g5/ready.json --json --connections 32 --gap-ms 10 --rounds 3
