/work/main/bin/acceptlab-probe --target 127.0.0.1:56251 --shape keepalive --workers-from /tmp/acceptlab-peer-haproxy-mq-off-p6l3shyz/ready.json --json --connections 32 --requests 4 --rounds 2
