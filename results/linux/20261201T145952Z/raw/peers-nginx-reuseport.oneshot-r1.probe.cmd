/work/main/bin/acceptlab-probe --target 127.0.0.1:38621 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-reuseport-e_wtfl83/ready.json --json --connections 8 --rounds 10
