/work/main/bin/acceptlab-probe --target 127.0.0.1:38069 --shape burst --workers-from /tmp/acceptlab-peer-haproxy-mq-on-0nrfgx9l/ready.json --json --connections 32 --rounds 2
