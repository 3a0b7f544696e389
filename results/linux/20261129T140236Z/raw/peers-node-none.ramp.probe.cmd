/work/main/bin/acceptlab-probe --target 127.0.0.1:43439 --shape ramp --workers-from /tmp/acceptlab-peer-node-none-fktw3sdb/ready.json --json --connections 32 --gap-ms 10 --rounds 3
