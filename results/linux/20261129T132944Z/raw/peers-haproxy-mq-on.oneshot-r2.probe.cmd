/work/main/bin/acceptlab-probe --target 127.0.0.1:42189 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-on-ngzdivh0/ready.json --json --connections 8 --rounds 10
