/work/main/bin/acceptlab-probe --target 127.0.0.1:38069 --shape oneshot --workers-from /tmp/acceptlab-peer-haproxy-mq-on-0nrfgx9l/ready.json --json --connections 8 --rounds 10
