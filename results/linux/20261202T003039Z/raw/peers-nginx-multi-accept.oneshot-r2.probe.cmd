/work/main/bin/acceptlab-probe --target 127.0.0.1:36281 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-multi-accept-tsd2qk58/ready.json --json --connections 8 --rounds 10
