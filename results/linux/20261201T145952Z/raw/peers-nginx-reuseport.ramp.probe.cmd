/work/main/bin/acceptlab-probe --target 127.0.0.1:38621 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-reuseport-e_wtfl83/ready.json --json --connections 32 --gap-ms 10 --rounds 3
