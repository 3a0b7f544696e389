/work/main/bin/acceptlab-probe --target 127.0.0.1:49839 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-on-urmxjjsv/ready.json --json --connections 8 --rounds 10
