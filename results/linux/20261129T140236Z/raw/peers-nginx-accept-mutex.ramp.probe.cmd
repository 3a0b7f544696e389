/work/main/bin/acceptlab-probe --target 127.0.0.1:39079 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-1mb5q84e/ready.json --json --connections 32 --gap-ms 10 --rounds 3
