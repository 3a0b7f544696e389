/work/main/bin/acceptlab-probe --target 127.0.0.1:34317 --shape burst --connections 32 --rounds 1 --path /pid --workers-from /tmp/acceptlab-peer-haproxy-mq-on-c3c6kxtm/ready.json --json
