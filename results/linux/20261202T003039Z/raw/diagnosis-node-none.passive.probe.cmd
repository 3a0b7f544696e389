/work/main/bin/acceptlab-probe --target 127.0.0.1:43289 --shape burst --connections 32 --rounds 1 --path /pid --workers-from /tmp/acceptlab-peer-node-none-t33i8h90/ready.json --json
