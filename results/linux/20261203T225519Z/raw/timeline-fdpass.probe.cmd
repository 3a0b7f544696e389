/work/main/bin/acceptlab-probe --target 127.0.0.1:44841 --shape oneshot --connections 8 --rounds 1 --workers-from /work/main/results/linux/20261203T225519Z/raw/timeline-fdpass.ready --json
