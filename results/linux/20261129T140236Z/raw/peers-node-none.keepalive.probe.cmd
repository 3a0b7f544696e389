/work/main/bin/acceptlab-probe --target 127.0.0.1:43439 --shape keepalive --workers-from /tmp/acceptlab-peer-node-none-fktw3sdb/ready.json --json --connections 32 --requests 4 --rounds 3
