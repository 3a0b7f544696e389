/work/main/bin/acceptlab-probe --target 127.0.0.1:43793 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-default-_m2scsee/ready.json --json --connections 32 --gap-ms 10 --rounds 2
