/work/main/bin/acceptlab-probe --target 127.0.0.1:40963 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-reuseport-dtnbq1ln/ready.json --json --connections 32 --gap-ms 10 --rounds 3
