/work/main/bin/acceptlab-probe --target 127.0.0.1:37657 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-8e26siu4/ready.json --json --connections 8 --rounds 10
