/work/main/bin/acceptlab-probe --target 127.0.0.1:36063 --shape burst --connections 32 --rounds 3 --workers-from /work/main/results/linux/20261205T060510Z/raw/mutex_delay-0.ready --json
