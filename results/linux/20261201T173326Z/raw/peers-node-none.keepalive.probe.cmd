/work/main/bin/acceptlab-probe --target 127.0.0.1:52185 --shape keepalive --workers-from /tmp/acceptlab-peer-node-none-m1aip8vo/ready.json --json --connections 32 --requests 4 --rounds 2
