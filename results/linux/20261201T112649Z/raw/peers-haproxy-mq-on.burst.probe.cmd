/work/main/bin/acceptlab-probe --target 127.0.0.1:54509 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-on-w2bqazsk/ready.json --json --connections 32 --rounds 3
