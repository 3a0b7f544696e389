/work/main/bin/acceptlab-probe --target 127.0.0.1:52629 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-off-gczdmfdw/ready.json --json --connections 8 --rounds 10
