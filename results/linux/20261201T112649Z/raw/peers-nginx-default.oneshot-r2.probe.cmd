/work/main/bin/acceptlab-probe --target 127.0.0.1:47347 --shape oneshot --workers-from /tmp/acceptlab-peer-nginx-default-tvee6tus/ready.json --json --connections 8 --rounds 10
