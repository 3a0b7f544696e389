/work/main/bin/acceptlab-probe --target 127.0.0.1:35591 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-reuseport-626svdpd/ready.json --json --connections 32 --requests 4 --rounds 3
