/work/main/bin/acceptlab-probe --target 127.0.0.1:52185 --shape ramp --workers-from /tmp/acceptlab-peer-node-none-m1aip8vo/ready.json --json --connections 32 --gap-ms 10 --rounds 2
