/work/main/bin/acceptlab-probe --target 127.0.0.1:38993 --shape burst --connections 32 --rounds 1 --path /pid --workers-from /tmp/acceptlab-peer-node-rr-o7n6u7gx/ready.json --json
