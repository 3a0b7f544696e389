/work/main/bin/acceptlab-probe --target 127.0.0.1:49839 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-on-urmxjjsv/ready.json --json --connections 32 --rounds 2
