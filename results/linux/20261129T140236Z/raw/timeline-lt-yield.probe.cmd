/work/main/bin/acceptlab-probe --target 127.0.0.1:40329 --shape oneshot --connections 8 --rounds 1 --workers-from /work/main/results/linux/20261129T140236Z/raw/timeline-lt-yield.ready --json
