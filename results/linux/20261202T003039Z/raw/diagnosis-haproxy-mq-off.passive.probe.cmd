/work/main/bin/acceptlab-probe --target 127.0.0.1:48237 --shape burst --connections 32 --rounds 1 --path /pid --workers-from /tmp/acceptlab-peer-haproxy-mq-off-zpw49t_5/ready.json --json
