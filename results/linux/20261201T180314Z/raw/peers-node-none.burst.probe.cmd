/work/main/bin/acceptlab-probe --target 127.0.0.1:49001 --shape burst --workers-from /tmp/acceptlab-peer-node-none-fzjqfi0y/ready.json --json --connections 32 --rounds 2
