/work/main/bin/acceptlab-probe --target 127.0.0.1:47479 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-multi-accept-luj1ay13/ready.json --json --connections 32 --requests 4 --rounds 3
