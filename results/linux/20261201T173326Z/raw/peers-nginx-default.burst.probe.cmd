/work/main/bin/acceptlab-probe --target 127.0.0.1:37015 --shape burst --workers-from /tmp/acceptlab-peer-nginx-default-rmkpcyop/ready.json --json --connections 32 --rounds 2
