/work/main/bin/acceptlab-probe --target 127.0.0.1:44663 --shape keepalive --workers-from /tmp/acceptlab-peer-node-none-0hwzg042/ready.json --json --connections 32 --requests 4 --rounds 2
