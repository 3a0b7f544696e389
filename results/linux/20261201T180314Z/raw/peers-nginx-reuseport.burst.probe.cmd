/work/main/bin/acceptlab-probe --target 127.0.0.1:53315 --shape burst --workers-from /tmp/acceptlab-peer-nginx-reuseport-4umrfjwz/ready.json --json --connections 32 --rounds 2
