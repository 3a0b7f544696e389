/work/main/bin/acceptlab-probe --target 127.0.0.1:45475 --shape oneshot --connections 8 --rounds 1 --workers-from /work/main/results/linux/20261205T060510Z/raw/timeline-exclusive.ready --json
