/work/main/bin/acceptlab-probe --target 127.0.0.1:43793 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-default-_m2scsee/ready.json --json --connections 8 --rounds 10
