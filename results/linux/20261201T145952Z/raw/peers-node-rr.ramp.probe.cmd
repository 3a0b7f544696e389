/work/main/bin/acceptlab-probe --target 127.0.0.1:33975 --shape ramp --workers-from /tmp/acceptlab-peer-node-rr-oxsamxxl/ready.json --json --connections 32 --gap-ms 10 --rounds 3
