/work/main/bin/acceptlab-probe --target 127.0.0.1:36281 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-multi-accept-tsd2qk58/ready.json --json --connections 32 --gap-ms 10 --rounds 2
