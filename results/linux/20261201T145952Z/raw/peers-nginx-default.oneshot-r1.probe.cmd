/work/main/bin/acceptlab-probe --target 127.0.0.1:40819 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-default-7v27x_bu/ready.json --json --connections 8 --rounds 10
