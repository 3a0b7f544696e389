/work/main/bin/acceptlab-probe --target 127.0.0.1:35373 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-on-uuh7pft6/ready.json --json --connections 32 --rounds 3
