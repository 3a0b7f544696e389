/work/main/bin/acceptlab-probe --target 127.0.0.1:43773 --shape oneshot --workers-from /tmp/acceptlab-peer-node-none-0rdm54w3/ready.json --json --connections 8 --rounds 10
