/work/main/bin/acceptlab-probe --target 127.0.0.1:33633 --shape oneshot --workers-from /tmp/acceptlab-peer-node-none-2wqd65tc/ready.json --json --connections 8 --rounds 10
