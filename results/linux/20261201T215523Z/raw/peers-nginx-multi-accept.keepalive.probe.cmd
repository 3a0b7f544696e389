/work/main/bin/acceptlab-probe --target 127.0.0.1:40173 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-multi-accept-570w8oe1/ready.json --json --connections 32 --requests 4 --rounds 2
