/work/main/bin/acceptlab-probe --target 127.0.0.1:48755 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-default-su_vhd0r/ready.json --json --connections 32 --requests 4 --rounds 2
