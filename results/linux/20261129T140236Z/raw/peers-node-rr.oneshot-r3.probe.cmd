/work/main/bin/acceptlab-probe --target 127.0.0.1:45151 --shape oneshot --workers-from /tmp/acceptlab-peer-node-rr-79_9uv10/ready.json --json --connections 8 --rounds 10
