/work/main/bin/acceptlab-probe --target 127.0.0.1:42789 --shape ramp --workers-from /tmp/acceptlab-peer-node-rr-b_xtqfj3/ready.json --json --connections 32 --gap-ms 10 --rounds 2
