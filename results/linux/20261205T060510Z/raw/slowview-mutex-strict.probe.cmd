/work/main/bin/acceptlab-probe --target 127.0.0.1:45521 --shape burst --connections 16 --rounds 3 --workers-from /work/main/results/linux/20261205T060510Z/raw/slowview-mutex-strict.ready --json
