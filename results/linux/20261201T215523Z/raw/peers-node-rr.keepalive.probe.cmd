/work/main/bin/acceptlab-probe --target 127.0.0.1:42789 --shape keepalive --workers-from /tmp/acceptlab-peer-node-rr-b_xtqfj3/ready.json --json --connections 32 --requests 4 --rounds 2
