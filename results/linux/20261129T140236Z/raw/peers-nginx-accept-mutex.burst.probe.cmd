/work/main/bin/acceptlab-probe --target 127.0.0.1:39079 --shape burst --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-1mb5q84e/ready.json --json --connections 32 --rounds 3
