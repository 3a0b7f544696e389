/work/main/bin/acceptlab-probe --target 127.0.0.1:38755 --shape ramp --workers-from /tmp/acceptlab-peer-haproxy-mq-on-2iwjc0pt/ready.json --json --connections 32 --gap-ms 10 --rounds 3
