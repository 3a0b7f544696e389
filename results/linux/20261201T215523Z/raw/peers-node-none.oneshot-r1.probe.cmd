/work/main/bin/acceptlab-probe --target 127.0.0.1:44663 --shape oneshot --workers-from /tmp/acceptlab-peer-node-none-0hwzg042/ready.json --json --connections 8 --rounds 10
