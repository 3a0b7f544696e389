/work/main/bin/acceptlab-probe --target 127.0.0.1:41601 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-svzpxc5s/ready.json --json --connections 8 --rounds 10
