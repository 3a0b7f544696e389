/work/main/bin/acceptlab-probe --target 127.0.0.1:52185 --shape oneshot --workers-from /tmp/acceptlab-peer-node-none-m1aip8vo/ready.json --json --connections 8 --rounds 10
