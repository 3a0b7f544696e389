/work/main/bin/acceptlab-probe --target 127.0.0.1:42397 --shape oneshot --workers-from /tmp/acceptlab-peer-node-rr-hdk6xydj/ready.json --json --connections 8 --rounds 10
