/work/main/bin/acceptlab-probe --target 127.0.0.1:53189 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-multi-accept-_s2jr5tu/ready.json --json --connections 8 --rounds 10
