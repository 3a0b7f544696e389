/work/main/bin/acceptlab-probe --target 127.0.0.1:54943 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-reuseport-wwuc6mdy/ready.json --json --connections 32 --requests 4 --rounds 3
