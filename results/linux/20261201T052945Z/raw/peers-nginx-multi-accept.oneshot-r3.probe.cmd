/work/main/bin/acceptlab-probe --target 127.0.0.1:50047 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-multi-accept-a51x4l3j/ready.json --json --connections 8 --rounds 10
