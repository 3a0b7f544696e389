/work/main/bin/acceptlab-probe --target 127.0.0.1:37001 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-default-49ergb5v/ready.json --json --connections 32 --gap-ms 10 --rounds 3
