/work/main/bin/acceptlab-probe --target 127.0.0.1:42701 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-default-h1ep7yn9/ready.json --json --connections 8 --rounds 10
