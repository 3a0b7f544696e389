/work/main/bin/acceptlab-probe --target 127.0.0.1:48707 --shape keepalive --workers-from /tmp/acceptlab-peer-node-rr-10qx3ml6/ready.json --json --connections 32 --requests 4 --rounds 3
