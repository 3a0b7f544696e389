/work/main/bin/acceptlab-probe --target 127.0.0.1:58241 --shape oneshot --workers-from /tmp/acceptlab-peer-node-rr-ifbxfgxh/ready.json --json --connections 8 --rounds 10
