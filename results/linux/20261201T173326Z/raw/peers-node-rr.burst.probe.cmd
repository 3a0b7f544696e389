/work/main/bin/acceptlab-probe --target 127.0.0.1:42969 --shape burst --workers-from /tmp/acceptlab-peer-node-rr-5_codtlo/ready.json --json --connections 32 --rounds 2
