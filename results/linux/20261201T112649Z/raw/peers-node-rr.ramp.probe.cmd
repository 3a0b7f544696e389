/work/main/bin/acceptlab-probe --target 127.0.0.1:58241 --shape ramp --workers-from /tmp/acceptlab-peer-node-rr-ifbxfgxh/ready.json --json --connections 32 --gap-ms 10 --rounds 3
