/work/main/bin/acceptlab-probe --target 127.0.0.1:56251 --shape ramp --workers-from /tmp/acceptlab-peer-haproxy-mq-off-p6l3shyz/ready.json --json --connections 32 --gap-ms 10 --rounds 2
