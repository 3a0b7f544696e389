/work/main/bin/acceptlab-probe --target 127.0.0.1:53061 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-off-dzqclkwi/ready.json --json --connections 8 --rounds 10
