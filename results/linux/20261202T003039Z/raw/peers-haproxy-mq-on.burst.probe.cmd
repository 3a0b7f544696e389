/work/main/bin/acceptlab-probe --target 127.0.0.1:40217 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-on-outcdwa2/ready.json --json --connections 32 --rounds 2
