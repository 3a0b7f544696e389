/work/main/bin/acceptlab-probe --target 127.0.0.1:56251 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-off-p6l3shyz/ready.json --json --connections 32 --rounds 2
