/work/main/bin/acceptlab-probe --target 127.0.0.1:54623 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-xu72lyz2/ready.json --json --connections 32 --requests 4 --rounds 2
