/work/main/bin/acceptlab-probe --target 127.0.0.1:54509 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-on-w2bqazsk/ready.json --json --connections 8 --rounds 10
