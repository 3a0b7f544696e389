/work/main/bin/acceptlab-probe --target 127.0.0.1:36217 --shape burst --connections 16 --rounds 3 --workers-from /work/main/results/linux/20261204T034129Z/raw/slowview-fdpass.ready --json
