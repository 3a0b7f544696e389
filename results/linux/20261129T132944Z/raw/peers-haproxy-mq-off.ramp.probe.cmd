/work/main/bin/acceptlab-probe --target 127.0.0.1:60983 --shape ramp --workers-from /tmp/acceptlab-peer-haproxy-mq-off-atvcwd_q/ready.json --json --connections 32 --gap-ms 10 --rounds 3
