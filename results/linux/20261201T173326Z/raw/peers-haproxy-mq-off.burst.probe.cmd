/work/main/bin/acceptlab-probe --target 127.0.0.1:33347 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-off-gu0v4x_3/ready.json --json --connections 32 --rounds 2
