/work/main/bin/acceptlab-probe --target 127.0.0.1:44407 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-default-og78upe_/ready.json --json --connections 8 --rounds 10
