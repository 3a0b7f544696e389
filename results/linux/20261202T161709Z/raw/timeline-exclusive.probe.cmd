/work/main/bin/acceptlab-probe --target 127.0.0.1:35859 --shape oneshot --connections 8 --rounds 1 --workers-from /work/main/results/linux/20261202T161709Z/raw/timeline-exclusive.ready --json
