/work/main/bin/acceptlab-probe --target 127.0.0.1:32871 --shape ramp --workers-from /tmp/acceptlab-peer-haproxy-mq-on-ov0c7xox/ready.json --json --connections 32 --gap-ms 10 --rounds 3
