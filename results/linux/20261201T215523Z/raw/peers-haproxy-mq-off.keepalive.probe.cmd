/work/main/bin/acceptlab-probe --target 127.0.0.1:45375 --shape keepalive --workers-from /tmp/acceptlab-peer-haproxy-mq-off-5rt_m8l6/ready.json --json --connections 32 --requests 4 --rounds 2
