/work/main/bin/acceptlab-probe --target 127.0.0.1:41391 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-lu9sv7zf/ready.json --json --connections 8 --rounds 10
