/work/main/bin/acceptlab-probe --target 127.0.0.1:41391 --shape keepalive --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-lu9sv7zf/ready.json --json --connections 32 --requests 4 --rounds 2
