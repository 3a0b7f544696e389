/work/main/bin/acceptlab-probe --target 127.0.0.1:35245 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-upwmy0zk/ready.json --json --connections 8 --rounds 10
