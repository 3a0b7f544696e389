/work/main/bin/acceptlab-probe --target 127.0.0.1:48755 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-default-su_vhd0r/ready.json --json --connections 8 --rounds 10
