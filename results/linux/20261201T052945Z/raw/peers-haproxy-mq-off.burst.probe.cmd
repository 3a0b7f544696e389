/work/main/bin/acceptlab-probe --target 127.0.0.1:53061 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-off-dzqclkwi/ready.json --json --connections 32 --rounds 3
