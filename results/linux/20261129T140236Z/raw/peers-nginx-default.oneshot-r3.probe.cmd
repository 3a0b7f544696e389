/work/main/bin/acceptlab-probe --target 127.0.0.1:48381 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-default-lqjnbkbg/ready.json --json --connections 8 --rounds 10
