/work/main/bin/acceptlab-probe --target 127.0.0.1:35245 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-upwmy0zk/ready.json --json --connections 32 --requests 4 --rounds 3
