/work/main/bin/acceptlab-probe --target 127.0.0.1:55487 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-q21otxez/ready.json --json --connections 32 --gap-ms 10 --rounds 3
