/work/main/bin/acceptlab-probe --target 127.0.0.1:42701 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-default-h1ep7yn9/ready.json --json --connections 32 --gap-ms 10 --rounds 2
