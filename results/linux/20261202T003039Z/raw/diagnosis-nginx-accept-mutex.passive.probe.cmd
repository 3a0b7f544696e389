/work/main/bin/acceptlab-probe --target 127.0.0.1:60595 --shape burst --connections 32 --rounds 1 --path /pid --workers-from /tmp/acceptlab-peer-nginx-accept-mutex-jkxnfow6/ready.json --json
