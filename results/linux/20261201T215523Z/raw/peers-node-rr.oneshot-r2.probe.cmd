/work/main/bin/acceptlab-probe --target 127.0.0.1:42789 --shape oneshot --workers-from /tmp/acceptlab-peer-node-rr-b_xtqfj3/ready.json --json --connections 8 --rounds 10
