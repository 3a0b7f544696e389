/work/main/bin/acceptlab-probe --target 127.0.0.1:55295 --shape ramp --workers-from /tmp/acceptlab-peer-node-none-67mkq9r6/ready.json --json --connections 32 --gap-ms 10 --rounds 3
