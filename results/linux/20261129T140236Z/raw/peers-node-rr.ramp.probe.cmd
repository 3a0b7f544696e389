/work/main/bin/acceptlab-probe --target 127.0.0.1:45151 --shape ramp --workers-from /tmp/acceptlab-peer-node-rr-79_9uv10/ready.json --json --connections 32 --gap-ms 10 --rounds 3
