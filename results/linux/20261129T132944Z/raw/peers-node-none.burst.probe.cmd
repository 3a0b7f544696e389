/work/main/bin/acceptlab-probe --target 127.0.0.1:46509 --shape burst --workers-from /tmp/acceptlab-peer-node-none-i1q3lzxm/ready.json --json --connections 32 --rounds 3
