/work/main/bin/acceptlab-probe --target 127.0.0.1:55295 --shape oneshot --workers-from /tmp/acceptlab-peer-node-none-67mkq9r6/ready.json --json --connections 8 --rounds 10
