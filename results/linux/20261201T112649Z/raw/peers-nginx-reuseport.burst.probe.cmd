/work/main/bin/acceptlab-probe --target 127.0.0.1:54943 --shape burst --workers-from /tmp/acceptlab-peer-nginx-reuseport-wwuc6mdy/ready.json --json --connections 32 --rounds 3
