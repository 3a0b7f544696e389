/work/main/bin/acceptlab-probe --target 127.0.0.1:33347 --shape ramp --workers-from /tmp/acceptlab-peer-haproxy-mq-off-gu0v4x_3/ready.json --json --connections 32 --gap-ms 10 --rounds 2
