/work/wt/dev/bin/acceptlab-probe --target 127.0.0.1:41473 --shape burst --connections 32 --rounds 3 --workers-from /work/wt/dev/results/linux/20261202T031104Z/raw/mutex_delay-50.ready --json
