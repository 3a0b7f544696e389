/work/main/bin/acceptlab-probe --target 127.0.0.1:46797 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-multi-accept-wirh6gw1/ready.json --json --connections 8 --rounds 10
