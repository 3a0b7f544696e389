/work/main/bin/acceptlab-probe --target 127.0.0.1:40217 --shape ramp --workers-from /tmp/acceptlab-peer-haproxy-mq-on-outcdwa2/ready.json --json --connections 32 --gap-ms 10 --rounds 2
