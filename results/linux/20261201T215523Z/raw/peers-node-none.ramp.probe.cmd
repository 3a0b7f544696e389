/work/main/bin/acceptlab-probe --target 127.0.0.1:44663 --shape ramp --workers-from /tmp/acceptlab-peer-node-none-0hwzg042/ready.json --json --connections 32 --gap-ms 10 --rounds 2
