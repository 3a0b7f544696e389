/work/main/bin/acceptlab-probe --target 127.0.0.1:40665 --shape oneshot --connections 8 --rounds 1 --workers-from /work/main/results/linux/20261201T215523Z/raw/timeline-bare.ready --json
