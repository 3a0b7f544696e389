/work/main/bin/acceptlab-probe --target 127.0.0.1:43773 --shape ramp --workers-from /tmp/acceptlab-peer-node-none-0rdm54w3/ready.json --json --connections 32 --gap-ms 10 --rounds 2
