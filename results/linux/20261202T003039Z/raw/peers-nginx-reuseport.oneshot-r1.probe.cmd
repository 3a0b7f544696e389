/work/main/bin/acceptlab-probe --target 127.0.0.1:37559 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-reuseport-bwgztykf/ready.json --json --connections 8 --rounds 10
