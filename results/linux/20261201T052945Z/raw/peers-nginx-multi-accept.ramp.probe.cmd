/work/main/bin/acceptlab-probe --target 127.0.0.1:50047 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-multi-accept-a51x4l3j/ready.json --json --connections 32 --gap-ms 10 --rounds 3
