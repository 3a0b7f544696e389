/work/main/bin/acceptlab-probe --target 127.0.0.1:60983 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-off-atvcwd_q/ready.json --json --connections 8 --rounds 10
