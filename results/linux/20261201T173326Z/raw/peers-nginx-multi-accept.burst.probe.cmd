/work/main/bin/acceptlab-probe --target 127.0.0.1:53205 --shape burst --workers-from /tmp/acceptlab-peer-nginx-multi-accept-_jpvvl67/ready.json --json --connections 32 --rounds 2
