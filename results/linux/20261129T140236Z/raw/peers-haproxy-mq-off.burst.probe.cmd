/work/main/bin/acceptlab-probe --target 127.0.0.1:40319 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-off-in9re1g5/ready.json --json --connections 32 --rounds 3
