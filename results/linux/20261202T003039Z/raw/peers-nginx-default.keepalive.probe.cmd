/work/main/bin/acceptlab-probe --target 127.0.0.1:42701 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-default-h1ep7yn9/ready.json --json --connections 32 --requests 4 --rounds 2
