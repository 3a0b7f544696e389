/work/main/bin/acceptlab-probe --target 127.0.0.1:33975 --shape burst --workers-from /tmp/acceptlab-peer-node-rr-oxsamxxl/ready.json --json --connections 32 --rounds 3
