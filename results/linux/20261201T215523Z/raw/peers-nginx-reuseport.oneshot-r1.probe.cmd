/work/main/bin/acceptlab-probe --target 127.0.0.1:42553 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-reuseport-u70d3yly/ready.json --json --connections 8 --rounds 10
