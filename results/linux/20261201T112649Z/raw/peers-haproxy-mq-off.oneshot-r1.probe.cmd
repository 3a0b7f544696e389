/work/main/bin/acceptlab-probe --target 127.0.0.1:42209 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-off-817lnvfu/ready.json --json --connections 8 --rounds 10
