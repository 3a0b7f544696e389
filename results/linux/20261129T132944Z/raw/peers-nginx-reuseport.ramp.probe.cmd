/work/main/bin/acceptlab-probe --target 127.0.0.1:35591 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-reuseport-626svdpd/ready.json --json --connections 32 --gap-ms 10 --rounds 3
