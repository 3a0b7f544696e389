/work/main/bin/acceptlab-probe --target 127.0.0.1:35039 --shape burst --connections 32 --rounds 1 --path /pid --workers-from /tmp/acceptlab-peer-nginx-default-jnwdg378/ready.json --json
