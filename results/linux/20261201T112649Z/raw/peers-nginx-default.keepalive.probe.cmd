/work/main/bin/acceptlab-probe --target 127.0.0.1:47347 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-default-tvee6tus/ready.json --json --connections 32 --requests 4 --rounds 3
