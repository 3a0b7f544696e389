/work/main/bin/acceptlab-probe --target 127.0.0.1:40457 --shape oneshot --workers-from /tmp/acceptlab-peer-node-rr-ul0pc3n6/ready.json --json --connections 8 --rounds 10
