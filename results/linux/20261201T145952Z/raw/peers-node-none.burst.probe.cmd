/work/main/bin/acceptlab-probe --target 127.0.0.1:33633 --shape burst --workers-from /tmp/acceptlab-peer-node-none-2wqd65tc/ready.json --json --connections 32 --rounds 3
