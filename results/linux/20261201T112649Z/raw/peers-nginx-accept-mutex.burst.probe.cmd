/work/main/bin/acceptlab-probe --target 127.0.0.1:59035 --shape burst --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-g93inkwy/ready.json --json --connections 32 --rounds 3
