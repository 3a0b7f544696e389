/work/main/bin/acceptlab-probe --target 127.0.0.1:46509 --shape oneshot --workers-from /tmp/acceptlab-peer-node-none-i1q3lzxm/ready.json --json --connections 8 --rounds 10
