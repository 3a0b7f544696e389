/work/main/bin/acceptlab-probe --target 127.0.0.1:42701 --shape burst --workers-from /tmp/acceptlab-peer-nginx-default-h1ep7yn9/ready.json --json --connections 32 --rounds 2
