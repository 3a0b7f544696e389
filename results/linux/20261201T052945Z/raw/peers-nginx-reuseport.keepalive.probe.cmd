/work/main/bin/acceptlab-probe --target 127.0.0.1:40963 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-reuseport-dtnbq1ln/ready.json --json --connections 32 --requests 4 --rounds 3
