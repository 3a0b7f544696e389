/work/main/bin/acceptlab-probe --target 127.0.0.1:43793 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-default-_m2scsee/ready.json --json --connections 32 --requests 4 --rounds 2
