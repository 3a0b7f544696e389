/work/main/bin/acceptlab-probe --target 127.0.0.1:45151 --shape keepalive --workers-from /tmp/acceptlab-peer-node-rr-79_9uv10/ready.json --json --connections 32 --requests 4 --rounds 3
