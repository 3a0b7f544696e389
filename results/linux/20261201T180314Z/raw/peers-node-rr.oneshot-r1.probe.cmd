/work/main/bin/acceptlab-probe --target 127.0.0.1:39201 --shape oneshot --workers-from /tmp/acceptlab-peer-node-rr-nriggsin/ready.json --json --connections 8 --rounds 10
