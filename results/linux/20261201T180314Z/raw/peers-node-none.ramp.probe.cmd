/work/main/bin/acceptlab-probe --target 127.0.0.1:49001 --shape ramp --workers-from /tmp/acceptlab-peer-node-none-fzjqfi0y/ready.json --json --connections 32 --gap-ms 10 --rounds 2
