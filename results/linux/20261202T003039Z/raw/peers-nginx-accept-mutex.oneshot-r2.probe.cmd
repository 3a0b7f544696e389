/work/main/bin/acceptlab-probe --target 127.0.0.1:54623 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-xu72lyz2/ready.json --json --connections 8 --rounds 10
