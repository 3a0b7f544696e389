/work/wt/dev/bin/acceptlab-probe --target 127.0.0.1:39733 --shape oneshot --connections 8 --rounds 1 --workers-from /work/wt/dev/results/linux/20261202T031104Z/raw/timeline-bare.ready --json
