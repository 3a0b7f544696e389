/work/main/bin/acceptlab-probe --target 127.0.0.1:42857 --shape keepalive --workers-from /tmp/acceptlab-peer-node-none-mh224get/ready.json --json --connections 32 --requests 4 --rounds 3
