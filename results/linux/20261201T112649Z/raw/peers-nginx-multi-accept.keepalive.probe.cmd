/work/main/bin/acceptlab-probe --target 127.0.0.1:53189 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-multi-accept-_s2jr5tu/ready.json --json --connections 32 --requests 4 --rounds 3
