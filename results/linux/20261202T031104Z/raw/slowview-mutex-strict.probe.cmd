/work/wt/dev/bin/acceptlab-probe --target 127.0.0.1:34325 --shape burst --connections 16 --rounds 3 --workers-from /work/wt/dev/results/linux/20261202T031104Z/raw/slowview-mutex-strict.ready --json
