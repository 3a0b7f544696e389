/work/main/bin/acceptlab-probe --target 127.0.0.1:47347 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-default-tvee6tus/ready.json --json --connections 32 --gap-ms 10 --rounds 3
