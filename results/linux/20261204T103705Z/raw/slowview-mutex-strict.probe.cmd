/work/main/bin/acceptlab-probe --target 127.0.0.1:45345 --shape burst --connections 16 --rounds 3 --workers-from /work/main/results/linux/20261204T103705Z/raw/slowview-mutex-strict.ready --json
