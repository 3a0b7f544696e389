/work/main/bin/acceptlab-probe --target 127.0.0.1:46007 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-multi-accept-i9z1lnx_/ready.json --json --connections 32 --requests 4 --rounds 3
