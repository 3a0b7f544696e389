/work/main/bin/acceptlab-probe --target 127.0.0.1:38621 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-reuseport-e_wtfl83/ready.json --json --connections 32 --requests 4 --rounds 3
