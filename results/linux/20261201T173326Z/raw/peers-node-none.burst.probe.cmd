/work/main/bin/acceptlab-probe --target 127.0.0.1:52185 --shape burst --workers-from /tmp/acceptlab-peer-node-none-m1aip8vo/ready.json --json --connections 32 --rounds 2
