/work/main/bin/acceptlab-probe --target 127.0.0.1:37657 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-8e26siu4/ready.json --json --connections 32 --requests 4 --rounds 2
