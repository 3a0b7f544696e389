/work/main/bin/acceptlab-probe --target 127.0.0.1:53315 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-reuseport-4umrfjwz/ready.json --json --connections 8 --rounds 10
