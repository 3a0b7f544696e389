/work/main/bin/acceptlab-probe --target 127.0.0.1:37559 --shape burst --workers-from /tmp/acceptlab-peer-nginx-reuseport-bwgztykf/ready.json --json --connections 32 --rounds 2
