/work/main/bin/acceptlab-probe --target 127.0.0.1:36133 --shape keepalive --workers-from /tmp/acceptlab-peer-haproxy-mq-off-v0_41il7/ready.json --json --connections 32 --requests 4 --rounds 3
