/work/main/bin/acceptlab-probe --target 127.0.0.1:46007 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-multi-accept-i9z1lnx_/ready.json --json --connections 8 --rounds 10
