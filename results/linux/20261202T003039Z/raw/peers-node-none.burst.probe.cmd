/work/main/bin/acceptlab-probe --target 127.0.0.1:43773 --shape burst --workers-from /tmp/acceptlab-peer-node-none-0rdm54w3/ready.json --json --connections 32 --rounds 2
