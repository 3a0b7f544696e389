/work/main/bin/acceptlab-probe --target 127.0.0.1:40491 --shape burst --connections 16 --rounds 3 --workers-from /work/main/results/linux/20261204T114710Z/raw/slowview-fdpass.ready --json
