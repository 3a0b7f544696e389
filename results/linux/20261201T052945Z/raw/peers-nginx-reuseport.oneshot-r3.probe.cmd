/work/main/bin/acceptlab-probe --target 127.0.0.1:40963 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-reuseport-dtnbq1ln/ready.json --json --connections 8 --rounds 10
