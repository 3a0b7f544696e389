/work/main/bin/acceptlab-probe --target 127.0.0.1:52283 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-reuseport-p_yvjjrw/ready.json --json --connections 32 --gap-ms 10 --rounds 3
