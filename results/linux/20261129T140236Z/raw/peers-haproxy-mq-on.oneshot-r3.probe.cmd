/work/main/bin/acceptlab-probe --target 127.0.0.1:35373 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-on-uuh7pft6/ready.json --json --connections 8 --rounds 10
