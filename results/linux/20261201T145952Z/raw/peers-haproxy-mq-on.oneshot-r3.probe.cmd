/work/main/bin/acceptlab-probe --target 127.0.0.1:38755 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-on-2iwjc0pt/ready.json --json --connections 8 --rounds 10
