/work/main/bin/acceptlab-probe --target 127.0.0.1:39201 --shape burst --workers-from /tmp/acceptlab-peer-node-rr-nriggsin/ready.json --json --connections 32 --rounds 2
