/work/main/bin/acceptlab-probe --target 127.0.0.1:43721 --shape burst --connections 16 --rounds 3 --workers-from /work/main/results/linux/20261205T052114Z/raw/slowview-mutex.ready --json
