/work/main/bin/acceptlab-probe --target 127.0.0.1:40319 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-off-in9re1g5/ready.json --json --connections 8 --rounds 10
