/work/main/bin/acceptlab-probe --target 127.0.0.1:39201 --shape ramp --workers-from /tmp/acceptlab-peer-node-rr-nriggsin/ready.json --json --connections 32 --gap-ms 10 --rounds 2
