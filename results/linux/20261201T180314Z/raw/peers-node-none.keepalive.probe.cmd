/work/main/bin/acceptlab-probe --target 127.0.0.1:49001 --shape keepalive --workers-from /tmp/acceptlab-peer-node-none-fzjqfi0y/ready.json --json --connections 32 --requests 4 --rounds 2
