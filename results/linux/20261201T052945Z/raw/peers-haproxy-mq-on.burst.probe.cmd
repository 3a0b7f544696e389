/work/main/bin/acceptlab-probe --target 127.0.0.1:32871 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-on-ov0c7xox/ready.json --json --connections 32 --rounds 3
