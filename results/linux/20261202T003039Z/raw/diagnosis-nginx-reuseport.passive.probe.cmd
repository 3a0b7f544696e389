/work/main/bin/acceptlab-probe --target 127.0.0.1:56075 --shape burst --connections 32 --rounds 1 --path /pid --workers-from /tmp/acceptlab-peer-nginx-reuseport-moqbzx4b/ready.json --json
