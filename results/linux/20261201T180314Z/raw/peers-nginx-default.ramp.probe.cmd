/work/main/bin/acceptlab-probe --target 127.0.0.1:48755 --shape ramp --workers-from /tmp/acceptlab-peer-nginx-default-su_vhd0r/ready.json --json --connections 32 --gap-ms 10 --rounds 2
